# The demo's load balancer as a Puppet manifest (service lb-puppet), one branch per
# lifecycle action (the corral_action fact). Facts from the catalog: lb_port, and
# lb_backends, the kv nodes as host:port (comma separated). The server is corral-demo.py,
# which bootstrap copied to every node.
$dir = $facts['corral_service_dir']
$server = "${dir}/../../resources/scripts/corral-demo.py"

case $facts['corral_action'] {
  'configure': {
    # The balancer re-reads this file when it changes: no restart needed.
    file { "${dir}/backends":
      ensure  => file,
      content => "${join(split($facts['lb_backends'], ','), "\n")}\n",
      mode    => '0644',
    }
  }
  'start': {
    exec { 'start the balancer':
      command  => "setsid python3 ${server} lb --port ${facts['lb_port']} --backends-file ${dir}/backends > ${dir}/service.log 2>&1 < /dev/null & echo \$! > ${dir}/pid && python3 ${server} probe --timeout 20 --url http://${facts['corral_host']}:${facts['lb_port']}/lb/health",
      unless   => "test -f ${dir}/pid && kill -0 \$(cat ${dir}/pid)",
      provider => shell,
      cwd      => $dir,
      environment => ['MALLOC_ARENA_MAX=2', "CORRAL_HOST=${facts['corral_host']}",
        "CORRAL_NODE=${facts['corral_node']}", "CORRAL_CLUSTER_NAME=${facts['corral_cluster_name']}"],
    }
  }
  'stop': {
    exec { 'stop the balancer':
      command  => "kill -TERM -- -\$(cat ${dir}/pid); rm -f ${dir}/pid",
      onlyif   => "test -f ${dir}/pid",
      provider => shell,
    }
  }
  default: {
    notice("lb-puppet has nothing to do for ${facts['corral_action']}")
  }
}
