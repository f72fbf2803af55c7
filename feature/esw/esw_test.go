package esw

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu/cmdif/cmdiftest"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

func TestManagerAndFunctions(t *testing.T) {
	r := cmdiftest.YAML(t, "devices:\n  - profile: cx7-2p400g\n    functions: 2\n    nv: {configured: {SRIOV_EN: True, NUM_OF_VFS: 3}}\n")
	ctx := context.Background()
	pf0, err := Read(ctx, r.Devices[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !pf0.Manager || !pf0.VportGroupManager || pf0.ECPFVport || !pf0.FunctionsChanged.Supported || pf0.FunctionsChanged.DriverRequests || pf0.FunctionsChanged.Type != 0xe {
		t.Errorf("first PF: %+v", pf0)
	}
	if !strings.Contains(pf0.FunctionsChanged.Why, "ECPF") {
		t.Errorf("why: %q", pf0.FunctionsChanged.Why)
	}
	want := &Host{PFPresent: true, PFEnabled: true, VFs: 3, TotalVFs: 127, PCIBus: 3, MaxSFs: 256, SFBaseVport: 0x8000}
	if d := cmp.Diff(want, pf0.Host); d != "" {
		t.Errorf("host functions (-want +got):\n%s", d)
	}
	var names []string
	for _, v := range pf0.Vports {
		names = append(names, v.Name+"="+v.State+"/"+v.Admin)
	}
	if d := cmp.Diff([]string{"self=UP/AUTO", "uplink=UP/AUTO", "vf1=DOWN/AUTO", "vf2=DOWN/AUTO", "vf3=DOWN/AUTO"}, names); d != "" {
		t.Errorf("vports (-want +got):\n%s", d)
	}
	// The second PF manages its own e-switch: its host function is
	// itself, with its own VFs.
	pf1, err := Read(ctx, r.Devices[1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	want1 := &Host{PFPresent: true, PFEnabled: true, VFs: 3, TotalVFs: 127, PCIBus: 3, PCIFunction: 1, MaxSFs: 256, SFBaseVport: 0x8000}
	if d := cmp.Diff(want1, pf1.Host); d != "" || !pf1.Manager || len(pf1.Vports) != 5 {
		t.Errorf("second PF: manager %v, %d vports; host functions (-want +got):\n%s", pf1.Manager, len(pf1.Vports), d)
	}
	// A function that is not the manager (a VF, or a host PF under an
	// embedded CPU) reads only its own vport and the uplink.
	vf := dev.New("vf", "0000:03:00.2", dev.BackendFwctl, nil, nil, nil)
	vf.AttachCommander(notManager{t, r.Devices[0].Commander()})
	other, err := Read(ctx, vf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if other.Manager || other.Host != nil || !strings.Contains(other.HostError, "manager") || len(other.Vports) != 2 || other.FunctionsChanged.Supported ||
		!strings.Contains(other.FunctionsChanged.Why, "not the manager") {
		t.Errorf("a function that is not the manager: %+v", other)
	}
	few, _ := Read(ctx, r.Devices[0], Options{MaxVFs: 2})
	if !few.Truncated || len(few.Vports) != 4 {
		t.Errorf("MaxVFs 2: %d vports, truncated %v", len(few.Vports), few.Truncated)
	}
	rows := pf0.Rows()
	if rows[1][1] != "yes" || !strings.Contains(rows[6][1], "3 of 127") {
		t.Errorf("rows: %q", rows)
	}
}

// A link down shows on the function's vport and the uplink; the profile's NV
// configuration (SRIOV_EN, NUM_OF_VFS 8) gives the VFs.
func TestVportFollowsLink(t *testing.T) {
	r := cmdiftest.YAML(t, "devices:\n  - profile: cx7-2p400g\n    faults: {link_down: [1]}\n")
	rep, err := Read(context.Background(), r.Devices[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Vports[0].State != "DOWN" || rep.Vports[1].State != "DOWN" || rep.Host == nil || rep.Host.VFs != 8 || len(rep.Vports) != 10 {
		t.Errorf("vports %+v host %+v", rep.Vports, rep.Host)
	}
}

// notManager is a function's command interface with the e-switch roles of
// its general capabilities cleared, as a VF's read.
type notManager struct {
	t     *testing.T
	inner dev.Commander
}

func (n notManager) Exec(ctx context.Context, in []byte, outLen int) ([]byte, error) {
	out, err := n.inner.Exec(ctx, in, outLen)
	db, _ := cmdb.Load()
	c, _ := db.CommandByOpcode(cmdb.Opcode(in))
	general, _ := db.CapType("general")
	if err != nil || c == nil || c.Name != "QUERY_HCA_CAP" || int(cmdb.OpMod(in))>>1 != int(general.Value) {
		return out, err
	}
	p, err := db.Plan(c.Out)
	if err != nil {
		n.t.Fatal(err)
	}
	as := []prm.Assignment{{Path: "capability.cmd_hca_cap.eswitch_manager", Value: "0"}, {Path: "capability.cmd_hca_cap.vport_group_manager", Value: "0"}}
	if err := p.Encode(out, as); err != nil {
		n.t.Fatal(err)
	}
	return out, nil
}
