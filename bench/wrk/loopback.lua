-- Connect to 127.0.0.1 whatever host the URL names. wrk still sends that host as the
-- TLS server name (SNI) and in the Host header, so a custom domain's name needs no
-- entry in /etc/hosts. wrk calls wrk.resolve once, after loading this script.
function wrk.resolve(host, service)
  wrk.addrs = wrk.lookup("127.0.0.1", service)
end
