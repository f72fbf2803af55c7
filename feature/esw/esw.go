// Package esw reports a function's place in the adapter's e-switch through
// the command interface: whether it is the e-switch manager (and whether an
// embedded CPU function exists), whether the ESW_FUNCTIONS_CHANGED event is
// available to it, the host functions the manager sees (QUERY_ESW_FUNCTIONS:
// the PF, its VFs, the sub-function range), and the vport states
// (QUERY_VPORT_STATE).
//
// The facts and their sources (include/linux/mlx5/mlx5_ifc.h and
// device.h): the eswitch_manager and vport_group_manager bits of the
// general capabilities (cmd_hca_cap); e_switch_cap.esw_functions_changed
// and ecpf_vport_exists; the Linux driver requests the
// ESW_FUNCTIONS_CHANGED event (0xe) only when it runs on an ECPF that is the
// e-switch manager (gather_async_events_mask in
// drivers/net/ethernet/mellanox/mlx5/core/eq.c;
// mlx5_core_is_ecpf_esw_manager in include/linux/mlx5/driver.h).
package esw

import (
	"context"
	"fmt"
	"strings"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

// Options tune Read.
type Options struct {
	// MaxVFs bounds how many VF vports are queried (0: 64).
	MaxVFs int
}

// Report is one function's view of its e-switch.
type Report struct {
	Device string `json:"device"`
	// Manager: this function manages the e-switch (cmd_hca_cap.eswitch_manager).
	Manager bool `json:"eswitch_manager"`
	// VportGroupManager: it manages the vport group (with an Ethernet
	// port, the driver's MLX5_VPORT_MANAGER).
	VportGroupManager bool `json:"vport_group_manager"`
	// ECPFVport: the e-switch has an embedded CPU function's vport
	// (e_switch_cap.ecpf_vport_exists): a BlueField whose Arm side is the
	// ECPF. Whether this function is that ECPF is a bit of the
	// initialization segment, which the command interface does not reach.
	ECPFVport bool `json:"ecpf_vport_exists"`
	// FunctionsChanged is the ESW_FUNCTIONS_CHANGED event.
	FunctionsChanged Event `json:"esw_functions_changed"`
	// Host is the host functions as QUERY_ESW_FUNCTIONS gives them (nil
	// when this function may not ask: only the manager may).
	Host *Host `json:"host"`
	// HostError says why Host is missing.
	HostError string `json:"host_error,omitempty"`
	// Vports are the vport states: the function's own, the uplink, and
	// (from the manager) its VFs'.
	Vports []Vport `json:"vports"`
	// Truncated says VF vports past Options.MaxVFs were not queried.
	Truncated bool `json:"truncated,omitempty"`
}

// Event says whether a function can ask the firmware for an event.
type Event struct {
	Type uint8 `json:"type"` // MLX5_EVENT_TYPE_*
	// Supported is the capability bit.
	Supported bool `json:"supported"`
	// DriverRequests says the Linux driver subscribes to it on this
	// function (it does on an ECPF e-switch manager only).
	DriverRequests bool   `json:"driver_requests"`
	Why            string `json:"why"`
}

// Host is the host's functions on the e-switch.
type Host struct {
	Number       uint64 `json:"host_number"`
	PFPresent    bool   `json:"pf_present"`
	PFEnabled    bool   `json:"pf_enabled"`
	VFs          uint64 `json:"vfs"`
	TotalVFs     uint64 `json:"total_vfs"`
	PCIBus       uint64 `json:"pci_bus"`
	PCIDevice    uint64 `json:"pci_device"`
	PCIFunction  uint64 `json:"pci_function"`
	MaxSFs       uint64 `json:"max_sfs"`     // 2^e_switch_cap.log_max_esw_sf
	SFBaseVport  uint64 `json:"sf_base_id"`  // first SF vport number
	SFsEnabled   uint64 `json:"sfs_enabled"` // bits set in host_sf_enable
	SFBitmapSeen bool   `json:"sf_bitmap_seen"`
}

// Vport is one vport's state.
type Vport struct {
	Name   string `json:"name"`   // self, uplink, vf1 ...
	Number uint64 `json:"number"` // vport number (0 for self and the uplink)
	State  string `json:"state"`  // UP, DOWN
	Admin  string `json:"admin"`  // DOWN, UP, AUTO
	Error  string `json:"error,omitempty"`
}

// Read collects the report.
func Read(ctx context.Context, d *dev.Device, o Options) (*Report, error) {
	db, err := cmdb.Load()
	if err != nil {
		return nil, err
	}
	maxVFs := o.MaxVFs
	if maxVFs <= 0 {
		maxVFs = 64
	}
	gen, err := capPage(ctx, d, db, "general")
	if err != nil {
		return nil, err
	}
	rep := &Report{Device: d.Name, Vports: []Vport{}}
	rep.Manager = uintOf(gen, "eswitch_manager") == 1
	rep.VportGroupManager = uintOf(gen, "vport_group_manager") == 1
	evType := uint8(0xe)
	for _, c := range db.ConstsWithPrefix("MLX5_EVENT_TYPE_") {
		if c.Name == "ESW_FUNCTIONS_CHANGED" {
			evType = uint8(c.Value)
		}
	}
	rep.FunctionsChanged.Type = evType
	var eswPage *prm.Decoded
	if rep.Manager {
		if eswPage, err = capPage(ctx, d, db, "eswitch"); err != nil && !dev.IsCommandStatus(err) {
			return nil, err
		}
	}
	if eswPage != nil {
		rep.ECPFVport = uintOf(eswPage, "ecpf_vport_exists") == 1
		rep.FunctionsChanged.Supported = uintOf(eswPage, "esw_functions_changed") == 1
	}
	switch {
	case !rep.Manager:
		rep.FunctionsChanged.Why = "only the e-switch manager receives it, and this function is not the manager"
	case !rep.FunctionsChanged.Supported:
		rep.FunctionsChanged.Why = "the e-switch capabilities do not offer it (e_switch_cap.esw_functions_changed is 0)"
	case !rep.ECPFVport:
		rep.FunctionsChanged.Why = "available, but the Linux driver asks for it only on an embedded CPU function (ECPF) that manages the e-switch; this e-switch has no ECPF vport, so the host PF manages it and the host's own functions change only through it"
	default:
		rep.FunctionsChanged.Why = "available; the driver asks for it when it runs on the ECPF (the initialization segment says whether this function is the ECPF)"
		rep.FunctionsChanged.DriverRequests = false
	}
	if rep.Manager {
		host, err := hostFunctions(ctx, d, eswPage)
		switch {
		case err == nil:
			rep.Host = host
		case dev.IsCommandStatus(err) || dev.IsRefused(err):
			rep.HostError = err.Error()
		default:
			return nil, err
		}
	} else {
		rep.HostError = "QUERY_ESW_FUNCTIONS is for the e-switch manager"
	}
	self, err := vportState(ctx, d, 0, 0, false)
	if err != nil {
		return nil, err
	}
	self.Name = "self"
	uplink, err := vportState(ctx, d, 2, 0, false)
	if err != nil {
		return nil, err
	}
	uplink.Name = "uplink"
	rep.Vports = append(rep.Vports, self, uplink)
	if rep.Host != nil {
		n := int(rep.Host.VFs)
		if n > maxVFs {
			n, rep.Truncated = maxVFs, true
		}
		for vf := 1; vf <= n; vf++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			v, err := vportState(ctx, d, 1, uint64(vf), true)
			if err != nil {
				return nil, err
			}
			v.Name = fmt.Sprintf("vf%d", vf)
			rep.Vports = append(rep.Vports, v)
		}
	}
	return rep, nil
}

// capPage reads the current values of one capability page.
func capPage(ctx context.Context, d *dev.Device, db *cmdb.DB, typ string) (*prm.Decoded, error) {
	ct, err := db.CapType(typ)
	if err != nil {
		return nil, err
	}
	out, err := d.Command(ctx, "QUERY_HCA_CAP", []prm.Assignment{{Path: "op_mod", Value: fmt.Sprint(int(ct.Value)<<1 | 1)}})
	if err != nil {
		return nil, err
	}
	v, err := out.Get("capability." + ct.Node)
	if err != nil {
		return nil, err
	}
	p, err := db.Plan(ct.Node)
	if err != nil {
		return nil, err
	}
	start := v.Bit() / 8
	return p.Decode(out.Raw[start:])
}

func uintOf(d *prm.Decoded, path string) uint64 {
	v, err := d.Get(path)
	if err != nil {
		return 0
	}
	return v.Uint()
}

func hostFunctions(ctx context.Context, d *dev.Device, eswPage *prm.Decoded) (*Host, error) {
	out, err := d.Command(ctx, "QUERY_ESW_FUNCTIONS", nil)
	if err != nil {
		return nil, err
	}
	h := &Host{
		Number:    uintOf(out, "host_params_context.host_number"),
		PFPresent: uintOf(out, "host_params_context.host_pf_not_exist") == 0,
		PFEnabled: uintOf(out, "host_params_context.host_pf_disabled") == 0,
		VFs:       uintOf(out, "host_params_context.host_num_of_vfs"), TotalVFs: uintOf(out, "host_params_context.host_total_vfs"),
		PCIBus: uintOf(out, "host_params_context.host_pci_bus"), PCIDevice: uintOf(out, "host_params_context.host_pci_device"),
		PCIFunction: uintOf(out, "host_params_context.host_pci_function"),
	}
	if eswPage != nil {
		if n := uintOf(eswPage, "log_max_esw_sf"); n > 0 {
			h.MaxSFs = 1 << n
		}
		h.SFBaseVport = uintOf(eswPage, "esw_sf_base_id")
	}
	if v, err := out.Get("host_sf_enable"); err == nil {
		h.SFBitmapSeen = v.Len() > 0
		for i := 0; i < v.Len(); i++ {
			for x := v.Kid(i).Uint(); x != 0; x &= x - 1 {
				h.SFsEnabled++
			}
		}
	}
	return h, nil
}

// vportState asks for one vport; a firmware refusal is kept in the Vport.
func vportState(ctx context.Context, d *dev.Device, opMod int, vport uint64, other bool) (Vport, error) {
	o := 0
	if other {
		o = 1
	}
	v := Vport{Number: vport}
	out, err := d.Command(ctx, "QUERY_VPORT_STATE", []prm.Assignment{
		{Path: "op_mod", Value: fmt.Sprint(opMod)}, {Path: "vport_number", Value: fmt.Sprint(vport)}, {Path: "other_vport", Value: fmt.Sprint(o)}})
	switch {
	case err == nil:
	case dev.IsCommandStatus(err):
		v.Error = err.Error()
		return v, nil
	default:
		return v, err
	}
	st, _ := out.Get("state")
	if n, ok := st.EnumName(); ok {
		v.State = n
	} else {
		v.State = fmt.Sprint(st.Uint())
	}
	db, _ := cmdb.Load()
	adm := uintOf(out, "admin_state")
	if v.Admin = db.ConstName("MLX5_VPORT_ADMIN_STATE_", int64(adm)); v.Admin == "" {
		v.Admin = fmt.Sprint(adm)
	}
	return v, nil
}

// Rows lays the report out as a table of facts and vports.
func (r *Report) Rows() [][]string {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	rows := [][]string{{"WHAT", "VALUE", "DETAIL"},
		{"e-switch manager", yes(r.Manager), ""},
		{"vport group manager", yes(r.VportGroupManager), ""},
		{"ECPF vport on the e-switch", yes(r.ECPFVport), "whether this function is the ECPF is in the initialization segment, out of the command interface's reach"},
		{"ESW_FUNCTIONS_CHANGED event", yes(r.FunctionsChanged.Supported), r.FunctionsChanged.Why},
	}
	if r.Host != nil {
		h := r.Host
		rows = append(rows,
			[]string{"host PF", fmt.Sprintf("present %s, enabled %s", yes(h.PFPresent), yes(h.PFEnabled)), fmt.Sprintf("host %d, PCI %02x:%02x.%x", h.Number, h.PCIBus, h.PCIDevice, h.PCIFunction)},
			[]string{"host VFs", fmt.Sprintf("%d of %d", h.VFs, h.TotalVFs), ""},
			[]string{"sub-functions", fmt.Sprintf("%d enabled of %d", h.SFsEnabled, h.MaxSFs), fmt.Sprintf("vports from 0x%x", h.SFBaseVport)})
	} else {
		rows = append(rows, []string{"host functions", "-", r.HostError})
	}
	for _, v := range r.Vports {
		val := strings.TrimSpace(v.State + " (admin " + v.Admin + ")")
		if v.Error != "" {
			val = "-"
		}
		rows = append(rows, []string{"vport " + v.Name, val, v.Error})
	}
	if r.Truncated {
		rows = append(rows, []string{"vports", "...", "more VFs than Options.MaxVFs; not all were queried"})
	}
	return rows
}
