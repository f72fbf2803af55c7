package osmac

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cxray/cxray/kernel"
)

// System lists this machine's Ethernet interfaces (see system.go).
func System(ctx context.Context) (*Listing, error) {
	return system(ctx, "/sys", kernel.Options{})
}

// system reads the interfaces under root/class/net; links asks rtnetlink
// (tests give a fake) for the permanent addresses.
func system(ctx context.Context, root string, links kernel.Options) (*Listing, error) {
	dir := filepath.Join(root, "class/net")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("osmac: listing the interfaces: %w", err)
	}
	l := &Listing{Format: FormatLinux, Interfaces: []Interface{}}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("osmac: %w", err)
		}
		name := e.Name()
		read := func(f string) string {
			b, _ := os.ReadFile(filepath.Join(dir, name, f))
			return strings.TrimSpace(string(b))
		}
		if t := read("type"); t != "1" { // ARPHRD_ETHER; loopback is 772
			continue
		}
		mac, ok := NormalizeMAC(read("address"))
		if !ok || mac == "00:00:00:00:00:00" {
			continue
		}
		in := Interface{Name: name, MAC: mac, Status: read("operstate")}
		if t, err := os.Readlink(filepath.Join(dir, name, "device/driver")); err == nil {
			in.Description = filepath.Base(t)
		}
		// Without rtnetlink (old kernel, another network namespace) the
		// permanent address stays unknown; the current one still counts.
		if link, err := kernel.LinkByName(ctx, name, links); err == nil && len(link.PermanentAddress) == 6 {
			in.PermanentMAC = link.PermanentAddress.String()
		} else if ctx.Err() != nil {
			return nil, fmt.Errorf("osmac: %w", ctx.Err())
		}
		l.Interfaces = append(l.Interfaces, in)
	}
	sort.Slice(l.Interfaces, func(i, j int) bool { return l.Interfaces[i].Name < l.Interfaces[j].Name })
	return l, nil
}
