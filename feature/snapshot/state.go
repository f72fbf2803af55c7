package snapshot

import (
	"context"
	"fmt"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/caps"
	"github.com/cxray/cxray/nvconf"
)

// What a snapshot records around the registers: the NV configuration, the
// OS's MACs and the capability pages. Each section is optional in a file
// (snapshots written before they existed have none), and each records its
// own failure instead of failing the snapshot.

// NVConfig is the NV configuration as `cxray config query -e` reads it:
// per parameter its Next Boot and Current value. Every value is static: a
// change is what a baseline exists to catch.
type NVConfig struct {
	// Database names the parameter database that named the values.
	Database string      `json:"database,omitempty"`
	Error    string      `json:"error,omitempty"`
	Settings []NVSetting `json:"settings,omitempty"`
}

// NVSetting is one parameter element.
type NVSetting struct {
	Name     string `json:"name"` // LOG_TX_PSN_WINDOW, LINK_TYPE_P1
	TLV      string `json:"tlv"`
	Instance string `json:"instance,omitempty"`
	Next     string `json:"next_boot"`
	// Current is "" when the firmware cannot report it.
	Current string `json:"current,omitempty"`
	Class   string `json:"class"`
}

// OSView is the operating system's addresses of the function's network
// interfaces: a MAC the OS changed (drift from the burnt-in one) is a
// static change.
type OSView struct {
	Error   string      `json:"error,omitempty"`
	Netdevs []NetdevMAC `json:"netdevs,omitempty"`
}

// NetdevMAC is one interface's current and permanent MAC.
type NetdevMAC struct {
	Name             string `json:"name"`
	Address          string `json:"address,omitempty"`
	PermanentAddress string `json:"permanent_address,omitempty"`
}

// Capabilities are the QUERY_HCA_CAP pages (package caps), recorded when
// the device has a command interface; Note says why not otherwise.
type Capabilities struct {
	Note   string       `json:"note,omitempty"`
	Error  string       `json:"error,omitempty"`
	Report *caps.Report `json:"report,omitempty"`
}

// recordNV reads the NV configuration with db; nil db records nothing.
func recordNV(ctx context.Context, d *dev.Device, db *nvconf.DB) *NVConfig {
	if db == nil {
		return nil
	}
	out := &NVConfig{Database: db.Source}
	s, err := nvconf.Open(ctx, d, db)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	res, err := s.Query(ctx, nvconf.QueryOptions{Extended: true})
	if err != nil {
		out.Error = err.Error()
		return out
	}
	for _, st := range res.Settings {
		ns := NVSetting{Name: st.Name, TLV: st.TLV, Instance: st.Instance, Class: Static}
		if st.Next != nil {
			ns.Next = st.Next.Text
		}
		if st.Current != nil {
			ns.Current = st.Current.Text
		}
		out.Settings = append(out.Settings, ns)
	}
	return out
}

// recordOS reads the OS's view of the function's interfaces.
func recordOS(ctx context.Context, a *adapter.Adapter) *OSView {
	o, err := a.OS(ctx)
	if err != nil {
		return &OSView{Error: err.Error()}
	}
	out := &OSView{}
	for _, n := range o.Netdevs {
		out.Netdevs = append(out.Netdevs, NetdevMAC{Name: n.Name, Address: n.Address, PermanentAddress: n.PermanentAddress})
	}
	return out
}

// recordCaps reads the default capability pages when d has a command
// interface.
func recordCaps(ctx context.Context, d *dev.Device) *Capabilities {
	if d.Commander() == nil {
		return &Capabilities{Note: "no command interface on this backend: capability pages not recorded"}
	}
	r, err := caps.Read(ctx, d, caps.Options{})
	if err != nil {
		return &Capabilities{Error: err.Error()}
	}
	return &Capabilities{Report: r}
}

// diffExtras compares the sections around the registers of one device.
// A section missing from either file (an older snapshot) is said in a
// note, never reported as vanished.
func (r *Report) diffExtras(dk string, b, n *Device) {
	if b.Identity.FirmwarePending != n.Identity.FirmwarePending {
		r.Static = append(r.Static, textChange(dk, "identity", "firmware_pending", orNone(b.Identity.FirmwarePending), orNone(n.Identity.FirmwarePending)))
	}
	r.diffNV(dk, b.NV, n.NV)
	r.diffOS(dk, b.OS, n.OS)
	r.diffCaps(dk, b.Caps, n.Caps)
	r.diffPCIe(dk, b.PCIe, n.PCIe)
	r.diffDriver(dk, b.DriverHealth, n.DriverHealth)
}

func textChange(dk, reg, path, old, new string) Change {
	return Change{Device: dk, Register: reg, Path: path, Class: Static, Old: old, New: new, OldText: old, NewText: new}
}

// missing says, in a note, that a section was not compared.
func (r *Report) missing(dk, what string, b, n bool) bool {
	switch {
	case !b && !n:
		return true
	case !b:
		r.Notes = append(r.Notes, fmt.Sprintf("%s: the baseline has no %s (an older snapshot): not compared", dk, what))
		return true
	case !n:
		r.Notes = append(r.Notes, fmt.Sprintf("%s: the new snapshot has no %s: not compared", dk, what))
		return true
	}
	return false
}

// sectionErrors handles unreadable sections; it says whether to go on.
func (r *Report) sectionErrors(dk, what, be, ne string) bool {
	switch {
	case be != "" && ne != "":
		return false
	case be != "":
		r.Errors = append(r.Errors, fmt.Sprintf("%s %s: unreadable in the baseline (%s)", dk, what, be))
		return false
	case ne != "":
		r.Vanished = append(r.Vanished, Change{Device: dk, Register: what, Note: "readable in the baseline, unreadable now: " + ne})
		return false
	}
	return true
}

func (r *Report) diffNV(dk string, b, n *NVConfig) {
	if r.missing(dk, "NV configuration", b != nil, n != nil) || !r.sectionErrors(dk, "NV", b.Error, n.Error) {
		return
	}
	now := map[string]*NVSetting{}
	for i := range n.Settings {
		now[n.Settings[i].Name] = &n.Settings[i]
	}
	for _, bs := range b.Settings {
		ns := now[bs.Name]
		if ns == nil {
			r.Disappeared = append(r.Disappeared, Change{Device: dk, Register: "NV[next_boot]", Path: bs.Name, Class: Static, Old: bs.Next, OldText: bs.Next, Note: "parameter not listed now"})
			continue
		}
		delete(now, bs.Name)
		if bs.Next != ns.Next {
			r.Static = append(r.Static, textChange(dk, "NV[next_boot]", bs.Name, bs.Next, ns.Next))
		}
		if bs.Current != ns.Current {
			r.Static = append(r.Static, textChange(dk, "NV[current]", bs.Name, orNone(bs.Current), orNone(ns.Current)))
		}
	}
	for _, ns := range n.Settings {
		if now[ns.Name] != nil {
			r.Appeared = append(r.Appeared, Change{Device: dk, Register: "NV[next_boot]", Path: ns.Name, Class: Static, New: ns.Next, NewText: ns.Next, Note: "parameter not in the baseline"})
		}
	}
}

func (r *Report) diffOS(dk string, b, n *OSView) {
	if r.missing(dk, "OS view (MACs)", b != nil, n != nil) || !r.sectionErrors(dk, "OS", b.Error, n.Error) {
		return
	}
	now := map[string]*NetdevMAC{}
	for i := range n.Netdevs {
		now[n.Netdevs[i].Name] = &n.Netdevs[i]
	}
	for _, bn := range b.Netdevs {
		key := "OS[netdev=" + bn.Name + "]"
		nn := now[bn.Name]
		if nn == nil {
			r.Vanished = append(r.Vanished, Change{Device: dk, Register: key, Note: "the interface is in the baseline, not in the new snapshot"})
			continue
		}
		delete(now, bn.Name)
		if bn.Address != nn.Address {
			r.Static = append(r.Static, textChange(dk, key, "address", orNone(bn.Address), orNone(nn.Address)))
		}
		if bn.PermanentAddress != nn.PermanentAddress {
			r.Static = append(r.Static, textChange(dk, key, "permanent_address", orNone(bn.PermanentAddress), orNone(nn.PermanentAddress)))
		}
	}
	for _, nn := range n.Netdevs {
		if now[nn.Name] != nil {
			r.Appeared = append(r.Appeared, Change{Device: dk, Register: "OS[netdev=" + nn.Name + "]", Note: "interface not in the baseline"})
		}
	}
}

func (r *Report) diffCaps(dk string, b, n *Capabilities) {
	if r.missing(dk, "capability pages", b != nil, n != nil) {
		return
	}
	if b.Report == nil || n.Report == nil {
		switch {
		case b.Report != nil:
			why := n.Note + n.Error
			r.Notes = append(r.Notes, fmt.Sprintf("%s: capability pages recorded in the baseline only (%s): not compared", dk, why))
		case n.Report != nil:
			r.Notes = append(r.Notes, fmt.Sprintf("%s: capability pages recorded in the new snapshot only: not compared", dk))
		}
		return
	}
	for _, c := range caps.Diff(b.Report, n.Report) {
		old, new := c.Old, c.New
		if c.Path != "(page)" && (c.OldMax != c.Old || c.NewMax != c.New) {
			old, new = old+" (max "+c.OldMax+")", new+" (max "+c.NewMax+")"
		}
		r.Static = append(r.Static, textChange(dk, "CAPS["+c.Type+"]", c.Path, old, new))
	}
}
