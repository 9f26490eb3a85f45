# Writes the greeting fact into the service's folder.
file { "${facts['corral_service_dir']}/motd.txt":
  ensure  => file,
  content => $facts['greeting'],
  mode    => '0644',
}

file { "${facts['corral_service_dir']}/node.txt":
  ensure  => file,
  content => "${facts['corral_cluster_name']} node ${facts['corral_node']} ${facts['corral_action']}\n",
}
