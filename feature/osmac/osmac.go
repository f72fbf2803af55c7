// Package osmac reads the operating system's view of network interfaces
// from the listings people bring from hosts cxray cannot run on (Windows
// with WinMFT, locked-down machines): `ipconfig /all`, PowerShell's
// `Get-NetAdapter` (as its default table, or piped to `Format-List`), and
// Linux's `ip link` (text, `-br` or `-j`). Each gives interface names and
// their current MAC addresses, and the permanent MAC where the listing
// shows it (`ip link`'s permaddr, `Format-List *`'s PermanentAddress), so
// the MAC drift check of `cxray status` can run on them. System gives the
// same Listing for the machine cxray runs on (system.go).
//
// The formats are written from their documented shapes: Microsoft's
// ipconfig and Get-NetAdapter documentation (English labels) and
// iproute2's ip-link(8).
package osmac

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Interface is one network interface of a listing.
type Interface struct {
	Name string `json:"name"`
	// Description is Windows' adapter description ("Mellanox ConnectX-6 Dx
	// Adapter"): it says which NIC the interface is.
	Description string `json:"description,omitempty"`
	// MAC is the current address, lower-case with colons.
	MAC string `json:"mac"`
	// PermanentMAC is the burned-in address, when the listing shows it.
	PermanentMAC string `json:"permanent_mac,omitempty"`
	Status       string `json:"status,omitempty"`
	// Override is the address an administrator told the system to use
	// instead of the burned-in one, where System can see it (Windows'
	// NetworkAddress registry value); MAC is then normally this address.
	Override string `json:"override,omitempty"`
}

// Listing is what a text held.
type Listing struct {
	// Format names the listing: "ipconfig /all", "Get-NetAdapter",
	// "Get-NetAdapter | Format-List", "ip link", "ip -br link", "ip -j link".
	Format     string      `json:"format"`
	Interfaces []Interface `json:"interfaces"`
}

// Error is a listing that cannot be read.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// MaxText bounds a listing.
const MaxText = 4 << 20

// Parse recognises the listing and reads it.
func Parse(text string) (*Listing, error) {
	if len(text) > MaxText {
		return nil, &Error{Msg: fmt.Sprintf("%d bytes; a listing is at most %d", len(text), MaxText)}
	}
	text = strings.TrimPrefix(strings.ReplaceAll(text, "\r\n", "\n"), "\ufeff")
	t := strings.TrimSpace(text)
	lines := strings.Split(text, "\n")
	var l *Listing
	var err error
	switch {
	case strings.HasPrefix(t, "["):
		l, err = parseIPJSON(t)
	case hasLine(lines, isIPConfigSection):
		l, err = parseIPConfig(lines)
	case hasLine(lines, isIPLinkHead):
		l, err = parseIPLink(lines)
	case hasLine(lines, func(s string) bool {
		return strings.HasPrefix(strings.TrimSpace(s), "Name ") && strings.Contains(s, "MacAddress")
	}) && hasLine(lines, isDashes):
		l, err = parseNetAdapterTable(lines)
	case hasLine(lines, func(s string) bool { k, _, ok := listKV(s); return ok && k == "Name" }):
		l, err = parseNetAdapterList(lines)
	case hasLine(lines, isIPBrief):
		l, err = parseIPBrief(lines)
	default:
		return nil, &Error{Msg: "not a listing of network interfaces this reads: give the output of 'ipconfig /all', 'Get-NetAdapter' (or '| Format-List'), or 'ip link'"}
	}
	if err != nil {
		return nil, err
	}
	if len(l.Interfaces) == 0 {
		return nil, &Error{Msg: "the " + l.Format + " listing has no interface with a MAC address"}
	}
	return l, nil
}

func hasLine(lines []string, f func(string) bool) bool {
	for _, l := range lines {
		if f(l) {
			return true
		}
	}
	return false
}

// NormalizeMAC reads a MAC in the spellings listings use (aa:bb:cc:dd:ee:ff,
// AA-BB-CC-DD-EE-FF, AABBCCDDEEFF, aabb.ccdd.eeff) as lower-case with
// colons. Only 6-byte (Ethernet) addresses are MACs here.
func NormalizeMAC(s string) (string, bool) {
	s = strings.TrimSpace(s)
	var hexd []byte
	switch {
	case len(s) == 17 && (strings.Count(s, ":") == 5 || strings.Count(s, "-") == 5):
		sep := s[2]
		for i := 0; i < 17; i++ {
			if i%3 == 2 {
				if s[i] != sep {
					return "", false
				}
				continue
			}
			hexd = append(hexd, s[i])
		}
	case len(s) == 12:
		hexd = []byte(s)
	case len(s) == 14 && strings.Count(s, ".") == 2 && s[4] == '.' && s[9] == '.':
		hexd = []byte(strings.ReplaceAll(s, ".", ""))
	default:
		return "", false
	}
	out := make([]byte, 0, 17)
	for i, c := range hexd {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			c += 'a' - 'A'
		default:
			return "", false
		}
		if i > 0 && i%2 == 0 {
			out = append(out, ':')
		}
		out = append(out, c)
	}
	return string(out), true
}

// ---- ipconfig /all

// isIPConfigSection: "Ethernet adapter Ethernet 2:" at the start of a line.
func isIPConfigSection(l string) bool {
	return len(l) > 0 && l[0] != ' ' && strings.Contains(l, " adapter ") && strings.HasSuffix(strings.TrimSpace(l), ":")
}

// ipconfigKV splits "   Physical Address. . . . . . . . . : B8-3F-..." into
// its label and value.
func ipconfigKV(l string) (string, string, bool) {
	if len(l) == 0 || l[0] != ' ' {
		return "", "", false
	}
	i := strings.Index(l, " : ")
	if i < 0 {
		if j := strings.LastIndex(l, " :"); j >= 0 && j+2 == len(strings.TrimRight(l, " ")) {
			i = j
		} else {
			return "", "", false
		}
	}
	label := strings.TrimRight(strings.TrimSpace(l[:i]), ". ")
	val := ""
	if i+3 <= len(l) {
		val = strings.TrimSpace(l[i+3:])
	}
	return label, val, true
}

func parseIPConfig(lines []string) (*Listing, error) {
	l := &Listing{Format: "ipconfig /all"}
	var cur *Interface
	flush := func() {
		if cur != nil && cur.MAC != "" {
			l.Interfaces = append(l.Interfaces, *cur)
		}
		cur = nil
	}
	for _, s := range lines {
		s = strings.TrimRight(s, " \t")
		switch {
		case isIPConfigSection(s):
			flush()
			_, name, _ := strings.Cut(strings.TrimSuffix(strings.TrimSpace(s), ":"), " adapter ")
			cur = &Interface{Name: name}
		case cur == nil:
			continue // the Windows IP Configuration block
		default:
			label, val, ok := ipconfigKV(s)
			if !ok {
				continue
			}
			switch label {
			case "Description":
				cur.Description = val
			case "Media State":
				cur.Status = val
			case "Physical Address":
				if m, ok := NormalizeMAC(val); ok {
					cur.MAC = m
				}
			default:
				// Localised labels: a six-byte address is the physical one.
				if m, ok := NormalizeMAC(val); ok && cur.MAC == "" && strings.Count(val, "-") == 5 {
					cur.MAC = m
				}
			}
		}
	}
	flush()
	return l, nil
}

// ---- Get-NetAdapter

func isDashes(l string) bool {
	t := strings.TrimSpace(l)
	return t != "" && strings.Trim(t, "- ") == "" && strings.Contains(t, "--")
}

// parseNetAdapterTable reads Format-Table output: the headings (and the
// dashes under them) give where each column starts.
func parseNetAdapterTable(lines []string) (*Listing, error) {
	l := &Listing{Format: "Get-NetAdapter"}
	hdr := -1
	for i := 0; i+1 < len(lines); i++ {
		if strings.Contains(lines[i], "MacAddress") && isDashes(lines[i+1]) {
			hdr = i
			break
		}
	}
	if hdr < 0 {
		return nil, &Error{Msg: "a Get-NetAdapter table needs its heading line and the dashes under it"}
	}
	type col struct {
		name       string
		start, end int
	}
	dash := lines[hdr+1]
	var cols []col
	for i := 0; i < len(dash); {
		if dash[i] != '-' {
			i++
			continue
		}
		j := i
		for j < len(dash) && dash[j] == '-' {
			j++
		}
		cols = append(cols, col{start: i, end: j})
		i = j
	}
	for k := range cols {
		end := len(lines[hdr])
		if k+1 < len(cols) {
			end = min(cols[k+1].start, end)
		}
		if cols[k].start < len(lines[hdr]) {
			cols[k].name = strings.TrimSpace(lines[hdr][cols[k].start:max(end, cols[k].start)])
		}
	}
	cell := func(s string, k int) string {
		// A cell runs from its heading's start to the next heading's: the
		// dashes only underline the heading, the column (Status: 12
		// characters in the default view) may be wider.
		from := cols[k].start
		to := len(s)
		if k+1 < len(cols) {
			to = min(cols[k+1].start, len(s))
		}
		if from >= to {
			return ""
		}
		return strings.TrimSpace(s[from:to])
	}
	idx := map[string]int{}
	for k, c := range cols {
		idx[c.name] = k
	}
	ni, okN := idx["Name"]
	mi, okM := idx["MacAddress"]
	if !okN || !okM {
		return nil, &Error{Line: hdr + 1, Msg: "the table needs the Name and MacAddress columns (Get-NetAdapter's default view has them)"}
	}
	for n, s := range lines[hdr+2:] {
		if strings.TrimSpace(s) == "" {
			continue
		}
		mac := cell(s, mi)
		m, ok := NormalizeMAC(mac)
		if !ok {
			if mac == "" {
				continue // an adapter without an address
			}
			return nil, &Error{Line: hdr + 3 + n, Msg: fmt.Sprintf("%q in the MacAddress column is not a MAC address", mac)}
		}
		it := Interface{Name: cell(s, ni), MAC: m}
		if k, ok := idx["InterfaceDescription"]; ok {
			it.Description = cell(s, k)
		}
		if k, ok := idx["Status"]; ok {
			it.Status = cell(s, k)
		}
		l.Interfaces = append(l.Interfaces, it)
	}
	return l, nil
}

// listKV splits "Name                       : Ethernet 2".
func listKV(s string) (string, string, bool) {
	if s == "" || s[0] == ' ' {
		return "", "", false
	}
	k, v, ok := strings.Cut(s, " : ")
	if !ok {
		if t := strings.TrimRight(s, " "); strings.HasSuffix(t, " :") {
			return strings.TrimSpace(t[:len(t)-2]), "", true
		}
		return "", "", false
	}
	k = strings.TrimSpace(k)
	if k == "" || strings.ContainsAny(k, " \t") && !strings.HasSuffix(k, ")") {
		return "", "", false
	}
	return k, strings.TrimSpace(v), true
}

// parseNetAdapterList reads Format-List output: records of "Key : value"
// separated by blank lines; a long value goes on indented lines.
func parseNetAdapterList(lines []string) (*Listing, error) {
	l := &Listing{Format: "Get-NetAdapter | Format-List"}
	rec := map[string]string{}
	last := ""
	flush := func() {
		defer func() { rec, last = map[string]string{}, "" }()
		name := rec["Name"]
		if name == "" {
			return
		}
		it := Interface{Name: name, Description: rec["InterfaceDescription"], Status: rec["Status"]}
		if it.Status == "" {
			it.Status = rec["InterfaceOperationalStatus"]
		}
		if m, ok := NormalizeMAC(rec["MacAddress"]); ok {
			it.MAC = m
		}
		if m, ok := NormalizeMAC(rec["PermanentAddress"]); ok {
			it.PermanentMAC = m
		}
		if it.MAC == "" {
			return
		}
		l.Interfaces = append(l.Interfaces, it)
	}
	for _, s := range lines {
		s = strings.TrimRight(s, " \t")
		if strings.TrimSpace(s) == "" {
			flush()
			continue
		}
		if k, v, ok := listKV(s); ok {
			if k == "Name" && rec["Name"] != "" {
				flush() // records not separated by a blank line
			}
			rec[k], last = v, k
			continue
		}
		if last != "" && strings.HasPrefix(s, " ") {
			rec[last] += strings.TrimSpace(s) // the value went on
		}
	}
	flush()
	return l, nil
}

// ---- ip link

// isIPLinkHead: "2: ens1f0np0: <BROADCAST,...> mtu 1500 ...".
func isIPLinkHead(l string) bool {
	f := strings.Fields(l)
	return len(f) >= 3 && strings.HasSuffix(f[0], ":") && isDigits(strings.TrimSuffix(f[0], ":")) && strings.HasSuffix(f[1], ":") && strings.HasPrefix(f[2], "<")
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func ifName(s string) string {
	s = strings.TrimSuffix(s, ":")
	if i := strings.IndexByte(s, '@'); i > 0 {
		s = s[:i] // veth0@if3
	}
	return s
}

func parseIPLink(lines []string) (*Listing, error) {
	l := &Listing{Format: "ip link"}
	var cur *Interface
	flush := func() {
		if cur != nil && cur.MAC != "" {
			l.Interfaces = append(l.Interfaces, *cur)
		}
		cur = nil
	}
	for _, s := range lines {
		if isIPLinkHead(s) {
			flush()
			f := strings.Fields(s)
			cur = &Interface{Name: ifName(f[1])}
			for i := 3; i+1 < len(f); i++ {
				if f[i] == "state" {
					cur.Status = f[i+1]
				}
			}
			continue
		}
		f := strings.Fields(s)
		if cur == nil || len(f) < 2 || !strings.HasPrefix(f[0], "link/") {
			continue // altname, vf lines, prop lines
		}
		if f[0] != "link/ether" && f[0] != "link/infiniband" {
			continue // loopback, none
		}
		if m, ok := NormalizeMAC(f[1]); ok {
			cur.MAC = m
		}
		for i := 2; i+1 < len(f); i++ {
			if f[i] == "permaddr" {
				if m, ok := NormalizeMAC(f[i+1]); ok {
					cur.PermanentMAC = m
				}
			}
		}
	}
	flush()
	return l, nil
}

// isIPBrief: "ens1f0np0  UP  b8:3f:d2:d2:0a:20 <BROADCAST,...>".
func isIPBrief(l string) bool {
	f := strings.Fields(l)
	if len(f) < 3 {
		return false
	}
	_, ok := NormalizeMAC(f[2])
	return ok && strings.Contains(f[2], ":")
}

func parseIPBrief(lines []string) (*Listing, error) {
	l := &Listing{Format: "ip -br link"}
	for _, s := range lines {
		f := strings.Fields(s)
		if len(f) < 3 {
			continue
		}
		if m, ok := NormalizeMAC(f[2]); ok {
			l.Interfaces = append(l.Interfaces, Interface{Name: ifName(f[0]), Status: f[1], MAC: m})
		}
	}
	return l, nil
}

// parseIPJSON reads `ip -j link`.
func parseIPJSON(t string) (*Listing, error) {
	var links []struct {
		IfName    string `json:"ifname"`
		Address   string `json:"address"`
		PermAddr  string `json:"permaddr"`
		OperState string `json:"operstate"`
		LinkType  string `json:"link_type"`
	}
	if err := json.Unmarshal([]byte(t), &links); err != nil {
		return nil, &Error{Msg: "the listing starts like JSON ('ip -j link') but is not: " + err.Error()}
	}
	l := &Listing{Format: "ip -j link"}
	for _, k := range links {
		m, ok := NormalizeMAC(k.Address)
		if !ok || k.IfName == "" {
			continue
		}
		it := Interface{Name: ifName(k.IfName), MAC: m, Status: k.OperState}
		if p, ok := NormalizeMAC(k.PermAddr); ok {
			it.PermanentMAC = p
		}
		l.Interfaces = append(l.Interfaces, it)
	}
	return l, nil
}

// ByMAC finds the interfaces whose current or permanent MAC is mac.
func (l *Listing) ByMAC(mac string) []Interface {
	want, ok := NormalizeMAC(mac)
	if !ok {
		return nil
	}
	var out []Interface
	for _, it := range l.Interfaces {
		if it.MAC == want || it.PermanentMAC == want {
			out = append(out, it)
		}
	}
	return out
}
