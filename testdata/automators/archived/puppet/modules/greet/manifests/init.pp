# Writes the `greeting` fact into the service's folder.
class greet {
  file { "${facts['corral_service_dir']}/module.txt":
    ensure  => file,
    content => $facts['greeting'],
  }
}
