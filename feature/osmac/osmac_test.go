package osmac

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Listings in the documented shapes (names and addresses made up).
const ipconfig = `
Windows IP Configuration

   Host Name . . . . . . . . . . . . : gpu-node-07
   Primary Dns Suffix  . . . . . . . : lab.example
   Node Type . . . . . . . . . . . . : Hybrid
   IP Routing Enabled. . . . . . . . : No

Ethernet adapter Ethernet 2:

   Connection-specific DNS Suffix  . :
   Description . . . . . . . . . . . : Mellanox ConnectX-6 Dx Adapter
   Physical Address. . . . . . . . . : B8-3F-D2-D2-0A-20
   DHCP Enabled. . . . . . . . . . . : Yes
   Autoconfiguration Enabled . . . . : Yes
   IPv4 Address. . . . . . . . . . . : 10.0.0.7(Preferred)

Ethernet adapter Ethernet 3:

   Media State . . . . . . . . . . . : Media disconnected
   Connection-specific DNS Suffix  . :
   Description . . . . . . . . . . . : Mellanox ConnectX-6 Dx Adapter #2
   Physical Address. . . . . . . . . : 02-11-22-33-44-55
   DHCP Enabled. . . . . . . . . . . : Yes

Tunnel adapter isatap.{A1B2C3D4-0000-0000-0000-000000000000}:

   Media State . . . . . . . . . . . : Media disconnected
   Description . . . . . . . . . . . : Microsoft ISATAP Adapter
   Physical Address. . . . . . . . . : 00-00-00-00-00-00-00-E0
`

const netAdapterTable = `
Name                      InterfaceDescription                    ifIndex Status       MacAddress             LinkSpeed
----                      --------------------                    ------- ------       ----------             ---------
Ethernet 2                Mellanox ConnectX-6 Dx Adapter               12 Up           B8-3F-D2-D2-0A-20       100 Gbps
Ethernet 3                Mellanox ConnectX-6 Dx Adapter #2            14 Disconnected 02-11-22-33-44-55       100 Gbps
`

const netAdapterList = `

Name                       : Ethernet 2
InterfaceDescription       : Mellanox ConnectX-6 Dx Adapter
InterfaceIndex             : 12
MacAddress                 : B8-3F-D2-D2-0A-20
MediaType                  : 802.3
PhysicalMediaType          : 802.3
InterfaceOperationalStatus : Up
AdminStatus                : Up
LinkSpeed(Gbps)            : 100
MediaConnectionState       : Connected
PermanentAddress           : B83FD2D20A20

Name                       : Ethernet 3
InterfaceDescription       : Mellanox ConnectX-6 Dx Adapter #2 with a description long enough to
                             go on
InterfaceIndex             : 14
MacAddress                 : 02-11-22-33-44-55
InterfaceOperationalStatus : Down
PermanentAddress           : B83FD2D20A21
`

const ipLink = `1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000
    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00
4: ens1f0np0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP mode DEFAULT group default qlen 1000
    link/ether b8:3f:d2:d2:0a:20 brd ff:ff:ff:ff:ff:ff
    vf 0     link/ether 00:00:00:00:00:00 brd ff:ff:ff:ff:ff:ff, spoof checking off, link-state auto, trust off
    altname enp3s0f0np0
5: ens1f1np1: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN mode DEFAULT group default qlen 1000
    link/ether 02:11:22:33:44:55 brd ff:ff:ff:ff:ff:ff permaddr b8:3f:d2:d2:0a:21
    altname enp3s0f1np1
6: veth0@if7: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT group default qlen 1000
    link/ether 5e:00:00:00:00:01 brd ff:ff:ff:ff:ff:ff link-netnsid 0
`

const ipBrief = `lo               UNKNOWN        00:00:00:00:00:00 <LOOPBACK,UP,LOWER_UP>
ens1f0np0        UP             b8:3f:d2:d2:0a:20 <BROADCAST,MULTICAST,UP,LOWER_UP>
ens1f1np1        DOWN           02:11:22:33:44:55 <BROADCAST,MULTICAST>
`

const ipJSON = `[{"ifindex":4,"ifname":"ens1f0np0","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"operstate":"UP","link_type":"ether","address":"b8:3f:d2:d2:0a:20","broadcast":"ff:ff:ff:ff:ff:ff"},` +
	`{"ifindex":5,"ifname":"ens1f1np1","operstate":"DOWN","link_type":"ether","address":"02:11:22:33:44:55","permaddr":"b8:3f:d2:d2:0a:21"}]`

func TestListings(t *testing.T) {
	a := Interface{Name: "Ethernet 2", Description: "Mellanox ConnectX-6 Dx Adapter", MAC: "b8:3f:d2:d2:0a:20"}
	b := Interface{Name: "Ethernet 3", Description: "Mellanox ConnectX-6 Dx Adapter #2", MAC: "02:11:22:33:44:55", Status: "Media disconnected"}
	la := Interface{Name: "ens1f0np0", MAC: "b8:3f:d2:d2:0a:20", Status: "UP"}
	lb := Interface{Name: "ens1f1np1", MAC: "02:11:22:33:44:55", PermanentMAC: "b8:3f:d2:d2:0a:21", Status: "DOWN"}
	cases := []struct {
		name, text, format string
		want               []Interface
	}{
		{"ipconfig", ipconfig, "ipconfig /all", []Interface{a, b}},
		{"table", netAdapterTable, "Get-NetAdapter", []Interface{{Name: a.Name, Description: a.Description, MAC: a.MAC, Status: "Up"}, {Name: b.Name, Description: b.Description, MAC: b.MAC, Status: "Disconnected"}}},
		{"list", netAdapterList, "Get-NetAdapter | Format-List", []Interface{
			{Name: a.Name, Description: a.Description, MAC: a.MAC, PermanentMAC: "b8:3f:d2:d2:0a:20", Status: "Up"},
			{Name: b.Name, Description: "Mellanox ConnectX-6 Dx Adapter #2 with a description long enough togo on", MAC: b.MAC, PermanentMAC: "b8:3f:d2:d2:0a:21", Status: "Down"}}},
		{"ip link", ipLink, "ip link", []Interface{la, lb, {Name: "veth0", MAC: "5e:00:00:00:00:01", Status: "UP"}}},
		{"ip -br", ipBrief, "ip -br link", []Interface{{Name: "lo", MAC: "00:00:00:00:00:00", Status: "UNKNOWN"}, la, {Name: lb.Name, MAC: lb.MAC, Status: "DOWN"}}},
		{"ip -j", ipJSON, "ip -j link", []Interface{la, lb}},
		{"crlf", strings.ReplaceAll(ipconfig, "\n", "\r\n"), "ipconfig /all", []Interface{a, b}},
	}
	for _, c := range cases {
		l, err := Parse(c.text)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if l.Format != c.format {
			t.Errorf("%s: format %q", c.name, l.Format)
		}
		if diff := cmp.Diff(c.want, l.Interfaces); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	l, _ := Parse(ipLink)
	if got := l.ByMAC("B8-3F-D2-D2-0A-21"); len(got) != 1 || got[0].Name != "ens1f1np1" {
		t.Errorf("ByMAC permanent: %+v", got)
	}
}

func TestErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":      "not a listing",
		"hello": "not a listing",
		"[{":    "not is",
		"Windows IP Configuration\n\nTunnel adapter x:\n   Physical Address. . : 00-00-00-00-00-00-00-E0\n": "no interface with a MAC",
		"Name  MacAddress\n----  ----------\neth   zz-zz\n":                                                 "is not a MAC address",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(want, "not is")) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	for in, want := range map[string]string{"B8-3F-D2-D2-0A-20": "b8:3f:d2:d2:0a:20", "b83fd2d20a20": "b8:3f:d2:d2:0a:20", "b83f.d2d2.0a20": "b8:3f:d2:d2:0a:20", "b8:3f-d2:d2:0a:20": "", "00-00-00-00-00-00-00-E0": ""} {
		got, ok := NormalizeMAC(in)
		if got != want || ok != (want != "") {
			t.Errorf("NormalizeMAC(%q) = %q %v", in, got, ok)
		}
	}
}

// Formatters of the listings, for the fuzz property: what each prints of
// any interfaces reads back as them.
func fmtIPConfig(its []Interface) string {
	var b strings.Builder
	b.WriteString("\nWindows IP Configuration\n\n   Host Name . . . . . . . . . . . . : h\n")
	for _, it := range its {
		fmt.Fprintf(&b, "\nEthernet adapter %s:\n\n", it.Name)
		fmt.Fprintf(&b, "   Connection-specific DNS Suffix  . :\n   Description . . . . . . . . . . . : %s\n", it.Description)
		fmt.Fprintf(&b, "   Physical Address. . . . . . . . . : %s\n", strings.ToUpper(strings.ReplaceAll(it.MAC, ":", "-")))
	}
	return b.String()
}

func fmtList(its []Interface) string {
	var b strings.Builder
	for _, it := range its {
		fmt.Fprintf(&b, "\nName                       : %s\nInterfaceDescription       : %s\nMacAddress                 : %s\nPermanentAddress           : %s\n",
			it.Name, it.Description, strings.ToUpper(strings.ReplaceAll(it.MAC, ":", "-")), strings.ToUpper(strings.ReplaceAll(it.PermanentMAC, ":", "")))
	}
	return b.String()
}

func fmtTable(its []Interface) string {
	w := 4
	for _, it := range its {
		w = max(w, len(it.Name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-*s ifIndex MacAddress\n%s ------- ----------\n", w, "Name", strings.Repeat("-", w))
	for i, it := range its {
		fmt.Fprintf(&b, "%-*s %7d %s\n", w, it.Name, i+3, strings.ToUpper(strings.ReplaceAll(it.MAC, ":", "-")))
	}
	return b.String()
}

func fmtIPLink(its []Interface) string {
	var b strings.Builder
	for i, it := range its {
		fmt.Fprintf(&b, "%d: %s: <BROADCAST,MULTICAST,UP> mtu 1500 qdisc mq state UP mode DEFAULT group default qlen 1000\n    link/ether %s brd ff:ff:ff:ff:ff:ff", i+2, it.Name, it.MAC)
		if it.PermanentMAC != "" {
			fmt.Fprintf(&b, " permaddr %s", it.PermanentMAC)
		}
		b.WriteString("\n    altname x\n")
	}
	return b.String()
}

func randMAC(r *rand.Rand) string {
	m := make([]string, 6)
	for i := range m {
		m[i] = fmt.Sprintf("%02x", r.Intn(256))
	}
	return strings.Join(m, ":")
}

// clean makes a name each format can carry: no spaces at its ends, none
// of the separators the formats use.
func clean(s string, spaces bool) string {
	var b strings.Builder
	for _, c := range s {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '#' || spaces && c == ' ' {
			b.WriteRune(c)
		}
	}
	return strings.TrimSpace(b.String())
}

func FuzzListingsRoundTrip(f *testing.F) {
	f.Add("Ethernet 2", "Mellanox ConnectX-6 Dx Adapter", int64(1), uint8(2))
	f.Add("ens1f0np0", "x", int64(7), uint8(1))
	f.Fuzz(func(t *testing.T, name, descr string, seed int64, n uint8) {
		r := rand.New(rand.NewSource(seed))
		count := int(n%6) + 1
		for _, spaces := range []bool{true, false} {
			var its []Interface
			for i := 0; i < count; i++ {
				nm := clean(name, spaces)
				if nm == "" {
					nm = "if"
				}
				its = append(its, Interface{Name: fmt.Sprintf("%s%d", nm, i), Description: clean(descr, true), MAC: randMAC(r), PermanentMAC: randMAC(r)})
			}
			formats := map[string]func([]Interface) string{"ipconfig": fmtIPConfig, "list": fmtList, "table": fmtTable}
			if !spaces {
				formats["ip link"] = fmtIPLink
			}
			for fname, fm := range formats {
				l, err := Parse(fm(its))
				if err != nil {
					t.Fatalf("%s: %v\n%s", fname, err, fm(its))
				}
				if len(l.Interfaces) != len(its) {
					t.Fatalf("%s: %d interfaces, want %d\n%s", fname, len(l.Interfaces), len(its), fm(its))
				}
				for i, got := range l.Interfaces {
					want := its[i]
					if got.Name != want.Name || got.MAC != want.MAC {
						t.Fatalf("%s: %+v, want %+v\n%s", fname, got, want, fm(its))
					}
					if (fname == "list" || fname == "ip link") && got.PermanentMAC != want.PermanentMAC {
						t.Fatalf("%s: permanent %s, want %s", fname, got.PermanentMAC, want.PermanentMAC)
					}
				}
			}
		}
	})
}

// Whatever the text, Parse does not panic, and every address it returns
// is a normalised MAC that appears in the text in some spelling.
func FuzzParse(f *testing.F) {
	for _, s := range []string{ipconfig, netAdapterTable, netAdapterList, ipLink, ipBrief, ipJSON} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			return
		}
		low := strings.ToLower(strings.NewReplacer("-", "", ":", "", ".", "").Replace(s))
		for _, it := range l.Interfaces {
			if m, ok := NormalizeMAC(it.MAC); !ok || m != it.MAC {
				t.Fatalf("not normalised: %q", it.MAC)
			}
			if !strings.Contains(low, strings.ReplaceAll(it.MAC, ":", "")) {
				t.Fatalf("%s is not in the text", it.MAC)
			}
		}
	})
}
