// Package loopback tells the names and addresses of this machine's loopback
// interface from any other, for the live view: what it may serve without a
// token, and which Host headers it answers.
package loopback

import (
	"net"
	"strings"
)

// Host reports whether host names the loopback interface: the name
// localhost or a loopback address. Any other name may be an attacker's DNS
// name rebound to 127.0.0.1.
func Host(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
