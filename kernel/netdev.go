package kernel

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/internal/linuxabi"
)

// Netdev is one network interface of the function, with its current and
// permanent addresses.
type Netdev struct {
	Name    string `json:"name"`
	Ifindex int    `json:"ifindex,omitempty"`
	// Address is the current MAC (sysfs address), what the OS uses.
	Address string `json:"address,omitempty"`
	// PermanentAddress is the burnt-in MAC (rtnetlink IFLA_PERM_ADDRESS,
	// what `ethtool -P` shows). Empty when the kernel does not give one
	// (before Linux 5.6, or a device without a permanent address).
	PermanentAddress string `json:"permanent_address,omitempty"`
	// AddrAssignType: 0 permanent, 1 random, 2 stolen, 3 set by user space
	// (-1: unknown).
	AddrAssignType     int    `json:"addr_assign_type"`
	AddrAssignTypeName string `json:"addr_assign_type_name,omitempty"`
	OperState          string `json:"operstate,omitempty"`
	// PhysPortName is "p0" for the uplink of a switchdev-mode function,
	// "pf0vf3" and the like for its representors, "" when the driver names
	// none (legacy mode).
	PhysPortName string `json:"phys_port_name,omitempty"`
	// MACDrift is set when the current address differs from the permanent
	// one (a bond, a VM setup or an administrator changed it).
	MACDrift bool `json:"mac_drift"`
	// Problems lists what could not be read (source: reason).
	Problems map[string]string `json:"problems,omitempty"`
}

func (n *Netdev) problem(what string, err error) {
	if n.Problems == nil {
		n.Problems = map[string]string{}
	}
	n.Problems[what] = err.Error()
}

var assignTypes = map[int]string{0: "permanent", 1: "random", 2: "stolen", 3: "set"}

// Netdevs reads every interface of the function: sysfs for the current
// address, rtnetlink for the permanent one. Failing netlink is recorded
// per interface, not returned: the sysfs half is still worth having.
func (d *Device) Netdevs(ctx context.Context) ([]Netdev, error) {
	return d.netdevs(ctx, true)
}

func (d *Device) netdevs(ctx context.Context, links bool) ([]Netdev, error) {
	if !exists(d.pciDir) {
		return nil, d.goneError()
	}
	names, err := listDirs(filepath.Join(d.pciDir, "net"))
	if err != nil {
		return nil, fmt.Errorf("kernel: %v", err)
	}
	out := make([]Netdev, 0, len(names))
	for _, name := range names {
		n, err := d.netdev(ctx, name, links)
		if err != nil {
			return nil, err
		}
		out = append(out, *n)
	}
	return out, nil
}

// Netdev reads one interface by name.
func (d *Device) Netdev(ctx context.Context, name string) (*Netdev, error) {
	return d.netdev(ctx, name, true)
}

func (d *Device) netdev(ctx context.Context, name string, links bool) (*Netdev, error) {
	if err := checkIfname(name); err != nil {
		return nil, err
	}
	dir := filepath.Join(d.opts.root(), "class/net", name)
	n := &Netdev{Name: name, AddrAssignType: -1}
	read := func(file string) (string, bool, error) {
		s, ok, err := readOptional(ctx, filepath.Join(dir, file))
		if cerr := ctxErr(ctx, err); cerr != nil {
			return "", false, cerr
		}
		if err != nil {
			n.problem(file, err)
			return "", false, nil
		}
		return s, ok, nil
	}
	if s, ok, err := read("address"); err != nil {
		return nil, err
	} else if ok {
		if mac, perr := net.ParseMAC(s); perr != nil {
			n.problem("address", fmt.Errorf("%q is not a hardware address", s))
		} else {
			n.Address = mac.String()
		}
	}
	if s, ok, err := read("ifindex"); err != nil {
		return nil, err
	} else if ok {
		if v, perr := strconv.Atoi(s); perr != nil || v <= 0 {
			n.problem("ifindex", fmt.Errorf("%q is not an interface index", s))
		} else {
			n.Ifindex = v
		}
	}
	if s, ok, err := read("addr_assign_type"); err != nil {
		return nil, err
	} else if ok {
		if v, perr := strconv.Atoi(s); perr != nil || v < 0 {
			n.problem("addr_assign_type", fmt.Errorf("%q is not a number", s))
		} else {
			n.AddrAssignType, n.AddrAssignTypeName = v, assignTypes[v]
		}
	}
	if s, ok, err := read("operstate"); err != nil {
		return nil, err
	} else if ok {
		n.OperState = s
	}
	// Reading phys_port_name fails (EOPNOTSUPP) outside switchdev mode;
	// that is the common case, not a problem.
	if s, err := readAttr(ctx, filepath.Join(dir, "phys_port_name")); err == nil {
		n.PhysPortName = s
	} else if cerr := ctxErr(ctx, err); cerr != nil {
		return nil, cerr
	}
	if !links {
		return n, nil
	}
	link, err := d.Link(ctx, name)
	switch {
	case err == nil:
		if len(link.PermanentAddress) > 0 {
			n.PermanentAddress = link.PermanentAddress.String()
		}
		if n.Address == "" && len(link.Address) > 0 {
			n.Address = link.Address.String()
		}
		if n.Ifindex == 0 {
			n.Ifindex = link.Index
		}
	case ctx.Err() != nil:
		return nil, fmt.Errorf("kernel: %w", ctx.Err())
	default:
		n.problem("netlink", err)
	}
	if n.PermanentAddress != "" && n.Address != "" && !strings.EqualFold(n.PermanentAddress, n.Address) {
		n.MACDrift = true
	}
	return n, nil
}

var uplinkName = lazyre.New(`^p[0-9]+$`)

// Representor says the interface stands for a VF or SF in switchdev mode:
// it has no module of its own (the uplink has).
func (n *Netdev) Representor() bool {
	return n.PhysPortName != "" && !uplinkName.MatchString(n.PhysPortName)
}

// Link is what RTM_GETLINK says about an interface.
type Link struct {
	Index            int
	Name             string
	Address          net.HardwareAddr
	PermanentAddress net.HardwareAddr
}

// Link asks rtnetlink about one interface (RTM_GETLINK by name): its
// current and permanent hardware addresses. No privilege is needed.
func (d *Device) Link(ctx context.Context, name string) (*Link, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	if err := checkIfname(name); err != nil {
		return nil, err
	}
	dial := d.opts.DialRoute
	if dial == nil {
		dial = dialRoute
	}
	c, err := dial()
	if err != nil {
		return nil, fmt.Errorf("kernel: opening an rtnetlink socket: %v", err)
	}
	stop := bindContext(ctx, c.SetDeadline)
	defer func() { stop(); c.Close() }()
	ae := netlink.NewAttributeEncoder()
	ae.String(linuxabi.IFLA_IFNAME, name)
	attrs, err := ae.Encode()
	if err != nil {
		return nil, fmt.Errorf("kernel: encoding the link request: %v", err)
	}
	// struct ifinfomsg, all zero: any family, index given by name. Strict
	// checking (the default on our sockets) wants the unused fields zero.
	body := append(make([]byte, linuxabi.SizeofIfInfomsg), attrs...)
	msgs, err := c.Execute(netlink.Message{
		Header: netlink.Header{Type: linuxabi.RTM_GETLINK, Flags: netlink.Request},
		Data:   body,
	})
	if err != nil {
		return nil, netlinkErr(ctx, "link attributes of "+name, err, "")
	}
	for _, m := range msgs {
		if m.Header.Type != linuxabi.RTM_NEWLINK {
			continue
		}
		l, err := parseLink(m.Data)
		if err != nil {
			return nil, fmt.Errorf("kernel: link attributes of %s: %v", name, err)
		}
		return l, nil
	}
	return nil, fmt.Errorf("kernel: link attributes of %s: the kernel sent no link message", name)
}

// parseLink decodes an RTM_NEWLINK body: struct ifinfomsg, then attributes.
func parseLink(b []byte) (*Link, error) {
	if len(b) < linuxabi.SizeofIfInfomsg {
		return nil, fmt.Errorf("link message of %d bytes, shorter than its header", len(b))
	}
	l := &Link{Index: int(int32(binary.NativeEndian.Uint32(b[4:8])))}
	ad, err := netlink.NewAttributeDecoder(b[linuxabi.SizeofIfInfomsg:])
	if err != nil {
		return nil, err
	}
	for ad.Next() {
		switch ad.Type() {
		case linuxabi.IFLA_IFNAME:
			l.Name = ad.String()
		case linuxabi.IFLA_ADDRESS:
			l.Address = net.HardwareAddr(ad.Bytes())
		case linuxabi.IFLA_PERM_ADDRESS:
			l.PermanentAddress = net.HardwareAddr(ad.Bytes())
		}
	}
	if err := ad.Err(); err != nil {
		return nil, err
	}
	// The kernel leaves out an all-zero permanent address; a fake or old
	// kernel might not, and zero is no address.
	if isZero(l.PermanentAddress) {
		l.PermanentAddress = nil
	}
	return l, nil
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// checkIfname applies the kernel's rules for interface names (at most 15
// bytes, no slash, no NUL, not "." or ".."), so a bad name gets a clear
// message instead of the kernel's "attribute failed policy validation".
func checkIfname(name string) error {
	if name == "" || len(name) >= linuxabi.IFNAMSIZ || strings.ContainsAny(name, "/\x00 ") || name == "." || name == ".." {
		return fmt.Errorf("kernel: %q is not an interface name (1 to %d characters, no '/' or spaces)", name, linuxabi.IFNAMSIZ-1)
	}
	return nil
}
