package linkctl

import (
	"bufio"
	"context"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/cxray/cxray/adapter"
)

// RouteFiles are the kernel's routing tables (proc(5): /proc/net/route,
// and /proc/net/ipv6_route), where the default routes name the interfaces
// the host is managed through.
var RouteFiles = []string{"/proc/net/route", "/proc/net/ipv6_route"}

// DefaultRouteInterfaces lists the interfaces of the default routes in
// route files of the kernel's formats (a missing file is skipped).
func DefaultRouteInterfaces(files []string) []string {
	var out []string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		if strings.HasSuffix(f, "ipv6_route") {
			out = append(out, defaultsIPv6(fh)...)
		} else {
			out = append(out, defaultsIPv4(fh)...)
		}
		fh.Close()
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// defaultsIPv4: "Iface Destination Gateway Flags RefCnt Use Metric Mask
// ...", a default route has destination and mask 00000000.
func defaultsIPv4(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 8 && f[1] == "00000000" && f[7] == "00000000" && f[0] != "lo" {
			out = append(out, f[0])
		}
	}
	return out
}

// defaultsIPv6: "dest prefixlen src srclen nexthop metric refcnt use
// flags iface", a default route has dest ::/0 and a gateway.
func defaultsIPv6(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 10 && strings.Trim(f[0], "0") == "" && f[1] == "00" && strings.Trim(f[4], "0") != "" && f[9] != "lo" {
			out = append(out, f[9])
		}
	}
	return out
}

// ManagementPort says which port of the adapter carries one of the
// management interfaces given: its netdev name, or "" when none does.
func ManagementPort(ctx context.Context, ad *adapter.Adapter, ifaces []string) (int, string, error) {
	if len(ifaces) == 0 {
		return 0, "", nil
	}
	ps, err := ad.Ports(ctx)
	if err != nil {
		return 0, "", err
	}
	for _, p := range ps {
		if p.Netdev != "" && slices.Contains(ifaces, p.Netdev) {
			return p.Local, p.Netdev, nil
		}
	}
	return 0, "", nil
}
