package nvconf_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/nvstore"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/rawfile"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	prmbuiltin "github.com/cxray/cxray/prm/builtin"
)

// nvconf's plans and writes against the emulated NV store (emu/nvstore,
// installed by the scenario builder on the emulated adapter), over the
// real access path: gateway, ICMD, access registers.

type rig struct {
	t     *testing.T
	ctx   context.Context
	fw    *fw.Firmware
	store *nvstore.Store
	dev   *dev.Device
	db    *nvconf.DB
	s     *nvconf.Session
}

func newRig(t *testing.T, mod func(*nvstore.Defaults)) *rig {
	t.Helper()
	return newRigOn(t, mod, nil)
}

// newRigOn is newRig with the access path on clk (nil: the wall clock).
// A manual clock makes waits that last until the deadline (a busy
// firmware's retries) run in virtual time: at once, and the same on a
// loaded machine.
func newRigOn(t *testing.T, mod func(*nvstore.Defaults), clk clock.Clock) *rig {
	t.Helper()
	pdb, err := prmbuiltin.Load()
	if err != nil {
		t.Fatal(err)
	}
	return newRigWith(t, pdb, mod, clk)
}

// newRigWith is newRigOn with the emulator and cxray on register database
// pdb.
func newRigWith(t *testing.T, pdb *prm.DB, mod func(*nvstore.Defaults), clk clock.Clock) *rig {
	t.Helper()
	sc, err := scenario.FromProfile("cx7-2p400g")
	if err != nil {
		t.Fatal(err)
	}
	if mod != nil {
		mod(&sc.Devices[0].NV)
	}
	em, err := scenario.Build(sc, scenario.Options{DB: pdb})
	if err != nil {
		t.Fatal(err)
	}
	f := em.Adapters[0].Firmware
	st, ok := nvstore.Lookup(f)
	if !ok {
		t.Fatal("the scenario did not install the NV store")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	d, _, err := dev.OpenConfigSpace(ctx, "emu", "0000:03:00.0", dev.BackendEmulator, pdb, em.Functions()[0].Device, dev.StackOptions{SemaphoreTimeout: time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, ctx: ctx, fw: f, store: st, dev: d, db: load(t)}
	r.reopen()
	return r
}

func (r *rig) reopen() {
	r.t.Helper()
	s, err := nvconf.Open(r.ctx, r.dev, r.db)
	if err != nil {
		r.t.Fatal(err)
	}
	r.s = s
}

// values is name -> [default, current, next] from a fresh session.
func (r *rig) values(names ...string) map[string][3]string {
	r.t.Helper()
	r.reopen()
	res, err := r.s.Query(r.ctx, nvconf.QueryOptions{Names: names, Extended: true})
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[string][3]string{}
	for _, st := range res.Settings {
		out[st.Name] = [3]string{st.Default.Text, st.Current.Text, st.Next.Text}
	}
	return out
}

func (r *rig) plan(as ...string) (*nvconf.SetPlan, error) {
	r.t.Helper()
	a, err := nvconf.ParseAssignments(as)
	if err != nil {
		r.t.Fatal(err)
	}
	return r.s.PlanSet(r.ctx, a)
}

func (r *rig) set(as ...string) {
	r.t.Helper()
	p, err := r.plan(as...)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.s.ApplySet(r.ctx, p); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) walk() []nvconf.RawTLV {
	r.t.Helper()
	tlvs, err := r.s.Walk(r.ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	return tlvs
}

func TestOpenSession(t *testing.T) {
	r := newRig(t, nil)
	if r.s.Layout != (nvconf.Layout{Ports: 2, Modules: 2}) || !r.s.ReadDefault || !r.s.ReadCurrent || len(r.s.Notes) != 0 || r.s.Writer != nvconf.WriterUser1 {
		t.Errorf("session: %+v %v %v %v", r.s.Layout, r.s.ReadDefault, r.s.ReadCurrent, r.s.Notes)
	}
	if r.s.PRM() != r.dev.DB || r.s.HeaderCodec() == nil {
		t.Error("codecs")
	}
	// A firmware that cannot read defaults or current values: noted, and
	// such reads are refused.
	r = newRig(t, func(d *nvstore.Defaults) { d.NoReadDefault, d.NoReadCurrent = true, true })
	if r.s.ReadDefault || r.s.ReadCurrent || len(r.s.Notes) != 1 || !strings.Contains(r.s.Notes[0], "cannot read default (factory) values") {
		t.Errorf("no default reads: %v", r.s.Notes)
	}
	in := nvconf.Instance{TLV: r.db.TLV("nv_global_pci_conf")}
	if _, err := r.s.Read(r.ctx, in, nvconf.ModeFactory); err == nil || !strings.Contains(err.Error(), "cannot read default values") {
		t.Errorf("factory read: %v", err)
	}
	if _, err := r.s.Read(r.ctx, in, nvconf.ModeCurrent); err == nil || !strings.Contains(err.Error(), "cannot read current values") {
		t.Errorf("current read: %v", err)
	}
}

// No NV access at all: the reason and what to do, by the status the
// firmware answers. Status 1 is "busy", which the register layer asks
// again until the deadline: on the wall clock that took the whole minute
// of the rig's context, and under load the last retry could still be
// running at the deadline, so the error was the deadline's, not the
// firmware's answer. The access path runs on a manual clock, so the
// retries take virtual time.
func TestOpenRefused(t *testing.T) {
	for _, c := range []struct {
		status uint8
		hint   string
	}{
		{0, "does not offer NV configuration registers (MNVQC)"}, // default 4, not supported
		{7, "refuses NV configuration access from this function"},
		{0x70, "refuses NV configuration access from this function"},
		{0x1, "answered the NV capability query with an error"},
	} {
		r := newRigOn(t, nil, emu.NewManualClock(time.Unix(0, 0)))
		if err := r.store.SetFaults(nvstore.Faults{NoAccess: true, NoAccessStatus: c.status}); err != nil {
			t.Fatal(err)
		}
		_, err := nvconf.Open(r.ctx, r.dev, r.db)
		var nv *nvconf.NVError
		if !errors.As(err, &nv) || !strings.Contains(nv.Hint, c.hint) || nv.Op != "check NV access" || !strings.Contains(err.Error(), "nvconf: check NV access: ") {
			t.Errorf("status 0x%x: %v", c.status, err)
		}
		if c.status == 1 && !strings.Contains(err.Error(), "the firmware answered busy") {
			t.Errorf("status 1: %v, want the busy answers counted", err)
		}
	}
}

func TestQuery(t *testing.T) {
	r := newRig(t, nil)
	want := map[string][3]string{
		"SRIOV_EN":     {"False(0)", "True(1)", "True(1)"},
		"NUM_OF_VFS":   {"0", "8", "8"},
		"LINK_TYPE_P1": {"ETH(2)", "ETH(2)", "ETH(2)"},
		"LINK_TYPE_P2": {"ETH(2)", "ETH(2)", "ETH(2)"},
	}
	if d := cmp.Diff(want, r.values("SRIOV_EN", "NUM_OF_VFS", "LINK_TYPE")); d != "" {
		t.Errorf("by name (-want +got):\n%s", d)
	}
	// One port by its suffix; a capability by its tlv.field name.
	if d := cmp.Diff(map[string][3]string{"LINK_TYPE_P2": {"ETH(2)", "ETH(2)", "ETH(2)"}}, r.values("LINK_TYPE_P2")); d != "" {
		t.Errorf("one port (-want +got):\n%s", d)
	}
	if got := r.values("nv_global_pci_cap.max_vfs_per_pf"); got["nv_global_pci_cap.max_vfs_per_pf"][2] != "127" {
		t.Errorf("capability %v", got)
	}
	// Everything listed, filtered.
	res, err := r.s.Query(r.ctx, nvconf.QueryOptions{Filter: regexp.MustCompile(`^LINK_TYPE_P`)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range res.Settings {
		names = append(names, st.Name)
		if st.Default != nil || st.Current != nil {
			t.Errorf("%s: default/current read without Extended", st.Name)
		}
	}
	if d := cmp.Diff([]string{"LINK_TYPE_P1", "LINK_TYPE_P2"}, names); d != "" || res.Extended {
		t.Errorf("filtered (-want +got):\n%s", d)
	}
	// A parameter mstconfig hides is there with All, with why.
	res, _ = r.s.Query(r.ctx, nvconf.QueryOptions{All: true, Filter: regexp.MustCompile(`^VECTOR_CALC_DISABLE$`)})
	if len(res.Settings) != 1 || !strings.Contains(res.Settings[0].Hidden, "no dependency") {
		t.Errorf("hidden %+v", res.Settings)
	}
	res, _ = r.s.Query(r.ctx, nvconf.QueryOptions{Filter: regexp.MustCompile(`^VECTOR_CALC_DISABLE$`)})
	if len(res.Settings) != 0 {
		t.Errorf("hidden listed without All: %+v", res.Settings)
	}
	if _, err := r.s.Query(r.ctx, nvconf.QueryOptions{Names: []string{"NUM_OF_VF"}}); err == nil || !strings.Contains(err.Error(), "did you mean NUM_OF_VFS") {
		t.Errorf("typo: %v", err)
	}
	if _, err := r.s.Query(r.ctx, nvconf.QueryOptions{Names: []string{"LINK_TYPE_P3"}}); err == nil {
		t.Error("port 3 of a two-port adapter accepted")
	}
}

// A TLV the firmware does not support is reported as such when asked for
// by name, and left out of a full query.
func TestQueryUnsupported(t *testing.T) {
	r := newRig(t, func(d *nvstore.Defaults) { d.Unsupported = []string{"nv_sw_offload_conf"} })
	res, err := r.s.Query(r.ctx, nvconf.QueryOptions{Names: []string{"LOG_TX_PSN_WINDOW"}})
	if err != nil || len(res.Settings) != 0 || cmp.Diff([]string{"nv_sw_offload_conf"}, res.Unsupported) != "" {
		t.Errorf("%+v %v", res, err)
	}
	res, _ = r.s.Query(r.ctx, nvconf.QueryOptions{})
	for _, st := range res.Settings {
		if st.TLV == "nv_sw_offload_conf" {
			t.Errorf("%s listed", st.Name)
		}
	}
	// A set of it is refused with the reason; nothing is written.
	before := r.walk()
	if _, err := r.plan("LOG_TX_PSN_WINDOW=12"); err == nil || !strings.Contains(err.Error(), "does not support nv_sw_offload_conf (MNVQC)") {
		t.Errorf("set: %v", err)
	}
	if d := cmp.Diff(before, r.walk()); d != "" {
		t.Errorf("written:\n%s", d)
	}
}

// PlanSet works out whole-TLV writes from what is stored and checks the
// values; ApplySet writes Next Boot only and verifies.
func TestPlanAndApplySet(t *testing.T) {
	r := newRig(t, nil)
	p, err := r.plan("SRIOV_EN=False", "NUM_OF_VFS=16", "LINK_TYPE_P1=IB", "LINK_TYPE_P2=ETH")
	if err != nil {
		t.Fatal(err)
	}
	type w struct {
		TLV     string
		Changes []nvconf.ParamChange
	}
	var got []w
	for _, x := range p.Writes {
		cs := append([]nvconf.ParamChange(nil), x.Changes...)
		for i := range cs {
			cs[i].Ref = nvconf.Ref{}
		}
		got = append(got, w{x.Inst.String(), cs})
		if len(x.Before) != x.Inst.TLV.Size || len(x.After) != x.Inst.TLV.Size {
			t.Errorf("%s: %d/%d bytes", x.Inst, len(x.Before), len(x.After))
		}
	}
	want := []w{
		{"nv_global_pci_conf", []nvconf.ParamChange{
			{Name: "SRIOV_EN", Before: "True(1)", After: "False(0)", Current: "True(1)"},
			{Name: "NUM_OF_VFS", Before: "8", After: "16", Current: "8"},
		}},
		{"nv_vpi_link_type (port 1)", []nvconf.ParamChange{{Name: "LINK_TYPE_P1", Before: "ETH(2)", After: "IB(1)", Current: "ETH(2)"}}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("writes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"LINK_TYPE_P2"}, p.Unchanged); d != "" {
		t.Errorf("unchanged (-want +got):\n%s", d)
	}
	if err := r.s.ApplySet(r.ctx, p); err != nil {
		t.Fatal(err)
	}
	want3 := map[string][3]string{
		"SRIOV_EN":     {"False(0)", "True(1)", "False(0)"},
		"NUM_OF_VFS":   {"0", "8", "16"},
		"LINK_TYPE_P1": {"ETH(2)", "ETH(2)", "IB(1)"},
	}
	if d := cmp.Diff(want3, r.values("SRIOV_EN", "NUM_OF_VFS", "LINK_TYPE_P1")); d != "" {
		t.Errorf("after the set (-want +got):\n%s", d)
	}
	res, _ := r.s.Query(r.ctx, nvconf.QueryOptions{Extended: true})
	if res.PendingCount() != 3 {
		t.Errorf("%d pending", res.PendingCount())
	}
	// The same values again: nothing to write.
	p, err = r.plan("NUM_OF_VFS=16")
	if err != nil || len(p.Writes) != 0 || cmp.Diff([]string{"NUM_OF_VFS"}, p.Unchanged) != "" {
		t.Errorf("again: %+v %v", p, err)
	}
}

// Every refused value is listed at once, and nothing is written.
func TestPlanSetRefuses(t *testing.T) {
	r := newRig(t, nil)
	before := r.walk()
	for _, c := range []struct {
		set  []string
		want []string
	}{
		{[]string{"LINK_TYPE_P1=FOO"}, []string{"unknown value", "allowed: IB(1), ETH(2)"}},
		{[]string{"NUM_OF_VFS=500"}, []string{"NUM_OF_VFS=500: above the maximum 127 on this device (from $nv_global_pci_cap.max_vfs_per_pf", "allowed: 0..127"}},
		{[]string{"SRIOV_EN=perhaps"}, []string{"SRIOV_EN is a boolean"}},
		{[]string{"LINK_TYPE=ETH"}, []string{"set per port", "LINK_TYPE_P1"}},
		{[]string{"nv_global_pci_cap.max_vfs_per_pf=3"}, []string{"is a capability the firmware reports; it cannot be set"}},
		{[]string{"NUM_OF_VFS=4", "LINK_TYPE_P2=FC", "LOG_TX_PSN_WINDOW=64"}, []string{"2 values refused, nothing was written:", "LINK_TYPE_P2=FC", "LOG_TX_PSN_WINDOW"}},
	} {
		_, err := r.plan(c.set...)
		var ve *nvconf.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%v: %v", c.set, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q lacks %q", c.set, err, w)
			}
		}
	}
	if _, err := nvconf.ParseAssignments([]string{"NUM_OF_VFS"}); err == nil || !strings.Contains(err.Error(), "is not NAME=VALUE") {
		t.Errorf("no value: %v", err)
	}
	if d := cmp.Diff(before, r.walk()); d != "" {
		t.Errorf("a refused set wrote (-before +after):\n%s", d)
	}
}

// The firmware refusing a write: the hint, and which TLVs were already
// written.
func TestApplySetRejected(t *testing.T) {
	r := newRig(t, nil)
	if err := r.store.SetFaults(nvstore.Faults{RejectWrites: []string{"nv_vpi_link_type"}}); err != nil {
		t.Fatal(err)
	}
	p, err := r.plan("NUM_OF_VFS=16", "LINK_TYPE_P1=IB")
	if err != nil {
		t.Fatal(err)
	}
	err = r.s.ApplySet(r.ctx, p)
	var nv *nvconf.NVError
	if !errors.As(err, &nv) || nv.Status != dev.StatusBadConfig || !strings.Contains(err.Error(), "the firmware rejected the configuration") ||
		!strings.Contains(err.Error(), "(already written: nv_global_pci_conf)") {
		t.Errorf("rejected: %v", err)
	}
	// The advice is said once: the NV hint, not also the register
	// layer's general one for the status (issue 26.10).
	if msg := err.Error(); strings.Count(msg, "rejected") != 2 || strings.Contains(msg, "check them against") || !strings.Contains(msg, "status 0x20 (configuration rejected)") {
		t.Errorf("rejected, advice repeated: %v", msg)
	}
	// The flash out of erases.
	r.store.SetFaults(nvstore.Faults{EraseExceeded: true})
	p, _ = r.plan("NUM_OF_VFS=32")
	if err := r.s.ApplySet(r.ctx, p); !errors.As(err, &nv) || nv.Status != dev.StatusEraseExceeded || !strings.Contains(nv.Hint, "erase limit") {
		t.Errorf("erase exceeded: %v", err)
	}
}

func TestPlanReset(t *testing.T) {
	r := newRig(t, nil)
	r.set("LINK_TYPE_P1=IB", "LINK_TYPE_P2=IB", "NUM_OF_VFS=16")
	r.reopen()
	// A per-port parameter by its base name stands for every port.
	p, err := r.s.PlanReset(r.ctx, []string{"LINK_TYPE"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"nv_vpi_link_type (port 1)", "nv_vpi_link_type (port 2)"}, p.Names()); d != "" || !p.KnownDefaults || p.All {
		t.Errorf("targets (-want +got):\n%s", d)
	}
	want := []nvconf.ParamChange{{Name: "LINK_TYPE_P1", Before: "IB(1)", After: "ETH(2)"}, {Name: "LINK_TYPE_P2", Before: "IB(1)", After: "ETH(2)"}}
	if d := cmp.Diff(want, p.Changes); d != "" {
		t.Errorf("changes (-want +got):\n%s", d)
	}
	if p.Subject() != "nv_vpi_link_type (port 1), nv_vpi_link_type (port 2)" {
		t.Errorf("describe %q", p.Subject())
	}
	if err := r.s.Reset(r.ctx, p); err != nil {
		t.Fatal(err)
	}
	got := r.values("LINK_TYPE", "NUM_OF_VFS")
	if got["LINK_TYPE_P1"][2] != "ETH(2)" || got["LINK_TYPE_P2"][2] != "ETH(2)" || got["NUM_OF_VFS"][2] != "16" {
		t.Errorf("after reset: %v", got)
	}
	// One port by its suffix; a TLV by name.
	r.set("LINK_TYPE_P1=IB", "LINK_TYPE_P2=IB")
	r.reopen()
	p, _ = r.s.PlanReset(r.ctx, []string{"LINK_TYPE_P2"}, false)
	if d := cmp.Diff([]string{"nv_vpi_link_type (port 2)"}, p.Names()); d != "" {
		t.Errorf("one port (-want +got):\n%s", d)
	}
	p, _ = r.s.PlanReset(r.ctx, []string{"nv_global_pci_conf"}, false)
	if d := cmp.Diff([]string{"nv_global_pci_conf"}, p.Names()); d != "" || len(p.Changes) == 0 {
		t.Errorf("a TLV (-want +got):\n%s %v", d, p.Changes)
	}
	// Everything: the NV area ends empty.
	p, err = r.s.PlanReset(r.ctx, nil, true)
	if err != nil || !p.All || p.Subject() != "the whole NV configuration" || len(p.Targets) < 10 {
		t.Fatalf("all: %v %d targets", err, len(p.Targets))
	}
	if err := r.s.Reset(r.ctx, p); err != nil {
		t.Fatal(err)
	}
	if n := len(r.walk()); n != 0 {
		t.Errorf("%d TLVs stored after resetting everything", n)
	}
	if _, err := r.s.PlanReset(r.ctx, []string{"NO_SUCH"}, false); err == nil {
		t.Error("an unknown name accepted")
	}
}

func TestPlanResetUnsupported(t *testing.T) {
	r := newRig(t, func(d *nvstore.Defaults) { d.Unsupported = []string{"nv_sw_offload_conf"} })
	_, err := r.s.PlanReset(r.ctx, []string{"LOG_TX_PSN_WINDOW"}, false)
	var ve *nvconf.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "does not support nv_sw_offload_conf; nothing to reset") {
		t.Errorf("%v", err)
	}
	// --all leaves it out.
	p, err := r.s.PlanReset(r.ctx, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range p.Targets {
		if in.TLV.Name == "nv_sw_offload_conf" {
			t.Error("an unsupported TLV among the targets")
		}
	}
}

// Without default reads a reset cannot say what it changes, and still
// resets.
func TestPlanResetWithoutDefaults(t *testing.T) {
	r := newRig(t, func(d *nvstore.Defaults) { d.NoReadDefault = true })
	r.set("LINK_TYPE_P1=IB")
	r.reopen()
	p, err := r.s.PlanReset(r.ctx, []string{"LINK_TYPE_P1"}, false)
	if err != nil || p.KnownDefaults || len(p.Changes) != 0 || len(p.Targets) != 1 {
		t.Fatalf("%+v %v", p, err)
	}
	if err := r.s.Reset(r.ctx, p); err != nil {
		t.Fatal(err)
	}
	for _, x := range r.walk() {
		if x.Header.Type == p.Targets[0].Type() {
			t.Error("still stored after the reset")
		}
	}
}

func TestPlanRestore(t *testing.T) {
	r := newRig(t, nil)
	r.set("LINK_TYPE_P2=IB")
	backup := r.walk()
	// Change things: one TLV differs, one more is stored, one is gone.
	r.reopen()
	r.set("NUM_OF_VFS=64", "LOG_TX_PSN_WINDOW=5")
	r.reopen()
	rp, _ := r.s.PlanReset(r.ctx, []string{"LINK_TYPE_P2"}, false)
	if err := r.s.Reset(r.ctx, rp); err != nil {
		t.Fatal(err)
	}
	r.reopen()
	p, err := r.s.PlanRestore(r.ctx, backup, nvconf.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	names := func(ts []nvconf.RawTLV) []string {
		var out []string
		for _, x := range ts {
			out = append(out, r.db.DescribeType(x.Header.Type))
		}
		sort.Strings(out)
		return out
	}
	if d := cmp.Diff([]string{"nv_global_pci_conf", "nv_vpi_link_type (port 2)"}, names(p.Writes)); d != "" {
		t.Errorf("writes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"nv_sw_offload_conf"}, names(p.Kept)); d != "" || len(p.Resets) != 0 || p.Empty() {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	var deltas []string
	for _, ds := range p.Deltas {
		deltas = append(deltas, ds...)
	}
	sort.Strings(deltas)
	if d := cmp.Diff([]string{"LINK_TYPE_P2: (not stored) -> IB(1)", "NUM_OF_VFS: 64 -> 8"}, deltas); d != "" {
		t.Errorf("deltas (-want +got):\n%s", d)
	}
	if err := r.s.Restore(r.ctx, p); err != nil {
		t.Fatal(err)
	}
	// With ResetMissing the extra TLV goes too, and the area is the
	// backup again.
	r.reopen()
	p, _ = r.s.PlanRestore(r.ctx, backup, nvconf.RestoreOptions{ResetMissing: true})
	if d := cmp.Diff([]string{"nv_sw_offload_conf"}, names(p.Resets)); d != "" || len(p.Writes) != 0 {
		t.Errorf("resets (-want +got):\n%s", d)
	}
	if err := r.s.Restore(r.ctx, p); err != nil {
		t.Fatal(err)
	}
	r.reopen()
	if d := rawfile.Compare(backup, r.walk()); !d.Empty() {
		t.Errorf("after the restore: %+v", d)
	}
	p, _ = r.s.PlanRestore(r.ctx, backup, nvconf.RestoreOptions{ResetMissing: true})
	if !p.Empty() || p.Unchanged != len(backup) {
		t.Errorf("restoring what is there: %+v", p)
	}
}

func TestPlanRestoreRefuses(t *testing.T) {
	r := newRig(t, nil)
	good := r.walk()
	if len(good) == 0 {
		t.Fatal("nothing stored")
	}
	short := good[0]
	short.Data = short.Data[:len(short.Data)-1]
	for _, c := range []struct {
		tlvs []nvconf.RawTLV
		want string
	}{
		{[]nvconf.RawTLV{good[0], good[0]}, "appears twice in the file"},
		{[]nvconf.RawTLV{{Header: nvconf.Header{Type: 0x00ffffff}, Data: []byte{0}}}, "is not in the parameter database"},
		{[]nvconf.RawTLV{short}, "; the file has"},
	} {
		_, err := r.s.PlanRestore(r.ctx, c.tlvs, nvconf.RestoreOptions{})
		var ve *nvconf.ValidationError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	// A TLV the firmware does not let be written.
	r = newRig(t, func(d *nvstore.Defaults) { d.ReadOnly = []string{"nv_global_pci_conf"} })
	if _, err := r.s.PlanRestore(r.ctx, r.walk(), nvconf.RestoreOptions{}); err == nil || !strings.Contains(err.Error(), "does not allow writing nv_global_pci_conf") {
		t.Errorf("read-only: %v", err)
	}
}

// Apply: the firmware reset that makes Next Boot current.
func TestPlanAndApply(t *testing.T) {
	r := newRig(t, nil)
	p, err := r.s.PlanApply(r.ctx, false)
	if err != nil || !p.Nothing() {
		t.Fatalf("nothing pending: %+v %v", p, err)
	}
	r.set("NUM_OF_VFS=16", "LINK_TYPE_P1=IB")
	r.reopen()
	p, err = r.s.PlanApply(r.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Nothing() || p.Trigger != nvconf.TriggerLinkToggle || p.TriggerName() != "pcie_link_toggle" || !p.ReadCurrent ||
		cmp.Diff([]string{"NUM_OF_VFS 8 -> 16", "LINK_TYPE_P1 ETH(2) -> IB(1)"}, p.Pending) != "" {
		t.Errorf("plan %+v", p)
	}
	res, err := r.s.Apply(r.ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want := &nvconf.ApplyResult{Applied: []string{"LINK_TYPE_P1", "NUM_OF_VFS"}, StillPending: []string{}, ReadCurrent: true}
	if d := cmp.Diff(want, res); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	// At the next reboot: armed, still pending.
	r.set("LOG_TX_PSN_WINDOW=12")
	r.reopen()
	p, _ = r.s.PlanApply(r.ctx, true)
	if p.Trigger != nvconf.TriggerPERST || p.TriggerName() != "perst_reboot" {
		t.Errorf("at reboot %+v", p)
	}
	res, err = r.s.Apply(r.ctx, p)
	if err != nil || !res.ArmedAtReboot || cmp.Diff([]string{"LOG_TX_PSN_WINDOW"}, res.StillPending) != "" || len(res.Applied) != 0 {
		t.Errorf("armed %+v %v", res, err)
	}
	caps, err := r.s.FirmwareResetCaps(r.ctx)
	if err != nil || caps.Triggers&nvconf.TriggerLinkToggle == 0 {
		t.Errorf("caps %+v %v", caps, err)
	}
	e := &nvconf.ResetUnsupportedError{Trigger: nvconf.TriggerLinkToggle, Triggers: nvconf.TriggerPERST}
	if e.Error() != "the firmware does not offer the pcie_link_toggle reset (MFRL triggers 0x40); reboot or power-cycle the host to apply Next Boot" {
		t.Errorf("%q", e.Error())
	}
}

// Without MFRL the reset capabilities cannot be read, and apply says so.
func TestPlanApplyWithoutMFRL(t *testing.T) {
	r := newRig(t, nil)
	r.set("NUM_OF_VFS=16")
	if err := r.fw.SetFaults(fw.Faults{Unsupported: []string{"MFRL"}}); err != nil {
		t.Fatal(err)
	}
	r.reopen()
	_, err := r.s.PlanApply(r.ctx, false)
	var nv *nvconf.NVError
	if !errors.As(err, &nv) || !strings.Contains(err.Error(), "read the firmware reset capabilities (MFRL)") {
		t.Errorf("%v", err)
	}
}

// A firmware that cannot list its NV area: the backup before a write
// holds the TLVs the write changes, and says it is partial.
func TestBackupWithoutWalk(t *testing.T) {
	r := newRig(t, nil)
	full, partial, err := r.s.BackupTLVs(r.ctx, nil)
	if err != nil || partial || len(full) == 0 {
		t.Fatalf("full: %d %v %v", len(full), partial, err)
	}
	if err := r.fw.SetFaults(fw.Faults{Unsupported: []string{"MNVGN"}}); err != nil {
		t.Fatal(err)
	}
	_, err = r.s.Walk(r.ctx)
	var nv *nvconf.NVError
	if !errors.As(err, &nv) || !strings.Contains(nv.Hint, "cannot list its stored TLVs") {
		t.Errorf("walk: %v", err)
	}
	in := nvconf.Instance{TLV: r.db.TLV("nv_global_pci_conf")}
	tlvs, partial, err := r.s.BackupTLVs(r.ctx, []nvconf.Instance{in})
	if err != nil || !partial || len(tlvs) != 1 || tlvs[0].Header.Type != in.Type() || len(tlvs[0].Data) != in.TLV.Size {
		t.Errorf("partial: %+v %v %v", tlvs, partial, err)
	}
}

// stateDirs points the journal, the backups and the locks at temporary
// directories.
func stateDirs(t *testing.T) (journal nvconf.Journal, backups string) {
	t.Helper()
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	backups = filepath.Join(t.TempDir(), "backups")
	t.Setenv(nvconf.EnvBackupDir, backups)
	old := nvconf.LockDir
	nvconf.LockDir = filepath.Join(t.TempDir(), "locks")
	t.Cleanup(func() { nvconf.LockDir = old })
	j, err := nvconf.DefaultJournal()
	if err != nil {
		t.Fatal(err)
	}
	if j.Dir != filepath.Join(state, "cxray", "journal") {
		t.Errorf("journal in %s", j.Dir)
	}
	return j, backups
}

// commit commits a plan as `config set` does.
func (r *rig) commit(key string, p nvconf.Plan, confirmed bool, b nvconf.BackupOptions) (string, error) {
	_, path, err := nvconf.Commit(r.ctx, r.s, p, nvconf.CommitOptions{Key: key, Device: "emu", Confirmed: confirmed, Backup: b})
	return path, err
}

// mustPlan plans a set or fails the test.
func (r *rig) mustPlan(as ...string) *nvconf.SetPlan {
	r.t.Helper()
	p, err := r.plan(as...)
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

// Commit: lock, replan, back up, journal, write, verify, clear the
// journal.
func TestCommit(t *testing.T) {
	j, backups := stateDirs(t)
	r := newRig(t, nil)
	key := nvconf.KeyFor(dev.BackendEmulator, "emu:cx7.yaml@0000:03:00.0", "0000:03:00.0")
	p := r.mustPlan("NUM_OF_VFS=16")
	if d := cmp.Diff([]string{"nv_global_pci_conf NUM_OF_VFS: 8 -> 16"}, p.Describe()); d != "" {
		t.Errorf("describe (-want +got):\n%s", d)
	}
	path, err := r.commit(key, p, true, nvconf.BackupOptions{Info: nvconf.BackupInfo{Lines: []string{"device: emu"}}, Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != backups || !strings.HasSuffix(path, ".nvbackup") {
		t.Errorf("backup %s", path)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "NUM_OF_VFS = 8") || !strings.Contains(string(b), "# device: emu") {
		t.Errorf("the backup does not hold the configuration before the write:\n%s", b)
	}
	if e, err := j.Pending(key); e != nil || err != nil {
		t.Errorf("journal left: %+v %v", e, err)
	}
	if got := r.values("NUM_OF_VFS")["NUM_OF_VFS"][2]; got != "16" {
		t.Errorf("NUM_OF_VFS %s", got)
	}
	// The backup parses back into what the device held.
	tlvs, err := nvconf.ParseBackup(string(b), r.db)
	if err != nil || len(tlvs) == 0 {
		t.Errorf("backup: %d TLVs %v", len(tlvs), err)
	}
}

// A confirmed change whose replan differs (another writer changed the
// TLVs meanwhile) is refused before anything is written.
func TestCommitConflict(t *testing.T) {
	j, backups := stateDirs(t)
	r := newRig(t, nil)
	key := nvconf.KeyFor(dev.BackendEmulator, "emu", "0000:03:00.0")
	c := r.mustPlan("NUM_OF_VFS=16")
	// Another writer sets 4 after the user confirmed 8 -> 16.
	if err := r.s.ApplySet(r.ctx, r.mustPlan("NUM_OF_VFS=4")); err != nil {
		t.Fatal(err)
	}
	before := r.walk()
	_, err := r.commit(key, c, true, nvconf.BackupOptions{})
	var ce *nvconf.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "changed while you were asked") {
		t.Fatalf("%v", err)
	}
	if d := cmp.Diff(before, r.walk()); d != "" {
		t.Errorf("written (-before +after):\n%s", d)
	}
	if files, _ := filepath.Glob(filepath.Join(backups, "*")); len(files) != 0 {
		t.Errorf("backups %v", files)
	}
	if e, _ := j.Pending(key); e != nil {
		t.Errorf("journal %+v", e)
	}
	// Unconfirmed (--yes) builds on what is there.
	if _, err := r.commit(key, c, false, nvconf.BackupOptions{Path: filepath.Join(t.TempDir(), "b.nvbackup")}); err != nil {
		t.Errorf("unconfirmed: %v", err)
	}
	// A backup that cannot be written stops the change.
	c = r.mustPlan("NUM_OF_VFS=20")
	_, err = r.commit(key, c, false, nvconf.BackupOptions{Path: "-"})
	var be *nvconf.BackupError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("backup to '-': %v", err)
	}
	_, err = r.commit(key, c, false, nvconf.BackupOptions{Path: filepath.Join(t.TempDir(), "no", "such", "dir", "b")})
	if !errors.As(err, &be) {
		t.Errorf("unwritable backup: %v", err)
	}
	if got := r.values("NUM_OF_VFS")["NUM_OF_VFS"][2]; got != "16" {
		t.Errorf("NUM_OF_VFS %s after the refused changes", got)
	}
}

// A multi-TLV write the firmware refuses half-way (it took the first TLV,
// refused the second) is rolled back at once from the backup just taken:
// the TLVs are all old, no journal entry is left, and the error says what
// happened (issue 26.3).
func TestCommitRefusedHalfWayRollsBack(t *testing.T) {
	j, _ := stateDirs(t)
	r := newRig(t, nil)
	key := nvconf.KeyFor(dev.BackendEmulator, "emu", "0000:03:00.0")
	original := r.walk()
	if err := r.store.SetFaults(nvstore.Faults{RejectWrites: []string{"nv_vpi_link_type"}}); err != nil {
		t.Fatal(err)
	}
	path, err := r.commit(key, r.mustPlan("NUM_OF_VFS=16", "LINK_TYPE_P1=IB"), false, nvconf.BackupOptions{})
	var re *nvconf.RefusedError
	if !errors.As(err, &re) || !re.RolledBack || re.Backup != path || !strings.Contains(err.Error(), "rolled back from the backup") ||
		!strings.Contains(err.Error(), "already written: nv_global_pci_conf") {
		t.Fatalf("half-way refusal: %T %v", err, err)
	}
	var nv *nvconf.NVError
	if !errors.As(err, &nv) {
		t.Errorf("the error does not unwrap to the firmware's refusal: %v", err)
	}
	if e, _ := j.Pending(key); e != nil {
		t.Errorf("journal after a rolled-back write: %+v", e)
	}
	r.reopen()
	if d := rawfile.Compare(original, r.walk()); !d.Empty() {
		t.Errorf("after the roll-back the adapter differs from before: %+v", d)
	}
}

// A write that fails after it started and cannot be rolled back at once
// (the firmware refuses the roll-back too) leaves the journal entry: the
// next run finds it, and can finish the change or roll it back from the
// backup.
func TestCommitInterruptedAndRecover(t *testing.T) {
	j, _ := stateDirs(t)
	r := newRig(t, nil)
	key := nvconf.KeyFor(dev.BackendEmulator, "emu", "0000:03:00.0")
	original := r.walk()
	if err := r.store.SetFaults(nvstore.Faults{RejectWrites: []string{"nv_vpi_link_type"}}); err != nil {
		t.Fatal(err)
	}
	c := nvconf.AfterApply(r.mustPlan("NUM_OF_VFS=16", "LINK_TYPE_P1=IB"), func() {
		r.store.SetFaults(nvstore.Faults{RejectWrites: []string{"*"}}) // the roll-back is refused too
	})
	path, err := r.commit(key, c, false, nvconf.BackupOptions{})
	var we *nvconf.WriteError
	if !errors.As(err, &we) || we.Backup != path || we.RollbackErr == nil || !strings.Contains(err.Error(), "'cxray config recover -d emu'") ||
		!strings.Contains(err.Error(), "rolling it back at once failed too") {
		t.Fatalf("%v", err)
	}
	e, err := j.Pending(key)
	if err != nil || e == nil || e.Op != "set" || e.Backup != path || e.PID != os.Getpid() || len(e.Writes) != 2 {
		t.Fatalf("journal %+v %v", e, err)
	}
	ie := nvconf.Interrupted(e, r.db)
	if d := cmp.Diff([]string{"nv_global_pci_conf", "nv_vpi_link_type (port 1)"}, ie.Names); d != "" ||
		!strings.Contains(ie.Error(), "an interrupted set") || !strings.Contains(ie.Error(), "cxray config recover --rollback -d emu") {
		t.Errorf("interrupted (-want +got):\n%s\n%v", d, ie)
	}
	// Half applied: the first TLV is new.
	if got := r.values("NUM_OF_VFS", "LINK_TYPE_P1"); got["NUM_OF_VFS"][2] != "16" || got["LINK_TYPE_P1"][2] != "ETH(2)" {
		t.Errorf("half applied: %v", got)
	}
	r.store.SetFaults(nvstore.Faults{})
	b, _ := os.ReadFile(path)
	backup, err := nvconf.ParseBackup(string(b), r.db)
	if err != nil {
		t.Fatal(err)
	}
	// Finish: every write of the entry.
	fin := nvconf.PlanRecover(e, false, backup)
	if len(fin.Writes) != 2 || fin.All || len(fin.Resets) != 0 {
		t.Errorf("finish %+v", fin)
	}
	// Roll back: the touched TLVs as the backup holds them; the one the
	// backup lacks (port 1's link type was never stored) returns to its
	// default.
	pci := nvconf.Instance{TLV: r.db.TLV("nv_global_pci_conf")}
	link := nvconf.Instance{TLV: r.db.TLV("nv_vpi_link_type"), Port: 1}
	back := nvconf.PlanRecover(e, true, backup)
	if len(back.Writes) != 1 || back.Writes[0].Header.Type != pci.Type() || cmp.Diff([]uint32{link.Type()}, back.Resets) != "" {
		t.Errorf("rollback %+v", back)
	}
	if held, err := r.s.Holds(r.ctx, back); err != nil || held {
		t.Errorf("half applied, the rollback is held: %v %v", held, err)
	}
	if err := r.s.Recover(r.ctx, back); err != nil {
		t.Fatal(err)
	}
	if held, err := r.s.Holds(r.ctx, back); err != nil || !held {
		t.Errorf("rolled back, the rollback is not held: %v %v", held, err)
	}
	if held, err := r.s.Holds(r.ctx, fin); err != nil || held {
		t.Errorf("rolled back, the finish is held: %v %v", held, err)
	}
	r.reopen()
	if d := rawfile.Compare(original, r.walk()); !d.Empty() {
		t.Errorf("after the rollback: %+v", d)
	}
	// Finishing instead writes both TLVs as meant.
	if err := r.s.Recover(r.ctx, fin); err != nil {
		t.Fatal(err)
	}
	if got := r.values("NUM_OF_VFS", "LINK_TYPE_P1"); got["NUM_OF_VFS"][2] != "16" || got["LINK_TYPE_P1"][2] != "IB(1)" {
		t.Errorf("finished: %v", got)
	}
	if err := j.Done(key); err != nil {
		t.Fatal(err)
	}
	if e, _ := j.Pending(key); e != nil {
		t.Errorf("journal after Done: %+v", e)
	}
	// Done twice is not an error.
	if err := j.Done(key); err != nil {
		t.Errorf("second Done: %v", err)
	}
	// Recovering an interrupted reset of everything.
	all := nvconf.PlanRecover(&nvconf.JournalEntry{All: true}, false, nil)
	if err := r.s.Recover(r.ctx, all); err != nil || len(r.walk()) != 0 {
		t.Errorf("reset all: %v", err)
	}
	rollAll := nvconf.PlanRecover(&nvconf.JournalEntry{All: true}, true, backup)
	if len(rollAll.Writes) != len(backup) {
		t.Errorf("rollback of a reset of everything: %+v", rollAll)
	}
}

// A write the firmware refuses before anything changed: read back, the
// adapter holds the backup, so the journal keeps no entry; the error says
// nothing changed and still unwraps to the firmware's refusal. A recover
// refused the same way puts back the entry it meant to resolve.
func TestCommitRefusedLeavesNoJournal(t *testing.T) {
	j, _ := stateDirs(t)
	r := newRig(t, nil)
	key := nvconf.KeyFor(dev.BackendEmulator, "emu", "0000:03:00.0")
	original := r.walk()
	if err := r.store.SetFaults(nvstore.Faults{RejectWrites: []string{"nv_global_pci_conf"}}); err != nil {
		t.Fatal(err)
	}
	path, err := r.commit(key, r.mustPlan("NUM_OF_VFS=16", "LINK_TYPE_P1=IB"), false, nvconf.BackupOptions{})
	var re *nvconf.RefusedError
	var we *nvconf.WriteError
	if !errors.As(err, &re) || errors.As(err, &we) || re.Backup != path || re.Prior != nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("refused commit: %T %v", err, err)
	}
	var nv *nvconf.NVError
	if !errors.As(err, &nv) {
		t.Errorf("the refusal does not unwrap to the NVError: %v", err)
	}
	if e, _ := j.Pending(key); e != nil {
		t.Errorf("journal after a refused write that changed nothing: %+v", e)
	}
	if d := rawfile.Compare(original, r.walk()); !d.Empty() {
		t.Errorf("the refused write changed the device: %+v", d)
	}
	// An entry pending (as a recover finds it): a refused recover keeps it.
	pend := &nvconf.JournalEntry{Key: key, Device: "emu", Op: "set", Backup: path, Writes: []nvconf.RawTLV{original[0]}}
	if err := j.Begin(pend); err != nil {
		t.Fatal(err)
	}
	w := r.mustPlan("NUM_OF_VFS=16").Writes[0]
	rec := nvconf.Recovery{Writes: []nvconf.RawTLV{{Header: nvconf.Header{Type: w.Inst.Type(), Version: w.Version, Length: len(w.After)}, Data: w.After}}}
	_, err = r.commit(key, rec, false, nvconf.BackupOptions{})
	if !errors.As(err, &re) || re.Prior == nil || !strings.Contains(err.Error(), "is still pending") || !strings.Contains(err.Error(), j.Path(key)) {
		t.Fatalf("refused recover: %v", err)
	}
	if e, _ := j.Pending(key); e == nil || e.Op != "set" || e.Backup != path {
		t.Errorf("the refused recover did not put the entry back: %+v", e)
	}
}

// The NV lock is one per adapter across processes and sessions: a second
// taker waits until its context ends, and says which lock another process
// holds and how long it waited (issue 26.5).
func TestLock(t *testing.T) {
	stateDirs(t)
	ctx := context.Background()
	for _, key := range []string{"emu-x", "pci-0000_03_00"} {
		unlock, err := nvconf.Lock(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		path, err := nvconf.LockPath(key)
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		_, err = nvconf.Lock(wctx, key)
		cancel()
		var le *nvconf.LockError
		if !errors.As(err, &le) || le.Key != key || le.Path != path || le.Wait <= 0 || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s held: %#v", key, err)
		}
		for _, want := range []string{"another process holds the NV lock of " + key, path, "waited "} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s held: %v; want it to say %q", key, err, want)
			}
		}
		// Another adapter's lock is free.
		other, err := nvconf.Lock(ctx, key+"y")
		if err != nil {
			t.Fatal(err)
		}
		other()
		unlock()
		again, err := nvconf.Lock(ctx, key)
		if err != nil {
			t.Fatalf("%s after release: %v", key, err)
		}
		again()
	}
}

// Only the users who may write NV can take an NV lock: a real adapter's
// lock is in LockDir (root's /run/cxray/nv-locks), an emulated one's in its
// user's state directory; both directories are 0700 and the files 0600, so
// another user cannot open, and so cannot flock, one (it could hold every
// writer off). A world-writable directory, as the old /tmp/cxray-nv-locks
// was, is refused rather than used.
func TestLockFilesArePrivate(t *testing.T) {
	stateDirs(t)
	state, _ := nvconf.StateDir()
	for key, dir := range map[string]string{"emu-x": filepath.Join(state, "nv-locks"), "pci-0000_03_00": nvconf.LockDir} {
		unlock, err := nvconf.Lock(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		unlock()
		if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: lock dir %s: %v %v, want 0700", key, dir, st.Mode(), err)
		}
		if st, err := os.Stat(filepath.Join(dir, key+".lock")); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: lock file: %v %v, want 0600", key, st.Mode(), err)
		}
	}
	if err := os.Chmod(nvconf.LockDir, 0o1777); err != nil {
		t.Fatal(err)
	}
	if _, err := nvconf.Lock(context.Background(), "pci-0000_03_00"); err == nil || !strings.Contains(err.Error(), "may be written by other users") {
		t.Errorf("a world-writable lock directory: %v, want it refused", err)
	}
	os.Chmod(nvconf.LockDir, 0o700)
	// A symbolic link planted as the lock file is not followed.
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, filepath.Join(nvconf.LockDir, "pci-0000_04_00.lock")); err != nil {
		t.Fatal(err)
	}
	if _, err := nvconf.Lock(context.Background(), "pci-0000_04_00"); err == nil {
		t.Error("a lock file that is a symbolic link was followed")
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the link's target was created")
	}
}

func TestKeyFor(t *testing.T) {
	for _, c := range []struct {
		backend   dev.Backend
		name, bdf string
		want      string
	}{
		// The NV configuration is the adapter's: every function, every
		// backend of this machine, one key.
		{dev.BackendDirect, "0000:03:00.1", "0000:03:00.1", "pci-0000_03_00"},
		{dev.BackendFwctl, "fwctl0", "0000:03:00.0", "pci-0000_03_00"},
		{dev.BackendEmulator, "emu:lab.yaml@0000:04:00.1", "0000:04:00.1", "emu-emu_lab_yaml_0000_04_00"},
		{dev.BackendEmulator, "emu", "0000:03:00.0", "emu-emu_0000_03_00"},
	} {
		if got := nvconf.KeyFor(c.backend, c.name, c.bdf); got != c.want {
			t.Errorf("%s %s %s: %s, want %s", c.backend, c.name, c.bdf, got, c.want)
		}
	}
}

func TestStateAndBackupDirs(t *testing.T) {
	t.Setenv(nvconf.EnvBackupDir, "")
	t.Setenv("XDG_STATE_HOME", "/state")
	if d, _ := nvconf.BackupDir(); d != "/state/cxray/backups" {
		t.Errorf("backup dir %s", d)
	}
	if d, _ := nvconf.StateDir(); d != "/state/cxray" {
		t.Errorf("state dir %s", d)
	}
	t.Setenv(nvconf.EnvBackupDir, "/b")
	if d, _ := nvconf.BackupDir(); d != "/b" {
		t.Errorf("backup dir %s", d)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if d, _ := nvconf.StateDir(); d != "/home/u/.local/state/cxray" {
		t.Errorf("state dir %s", d)
	}
	t.Setenv(nvconf.EnvBackupDir, "")
	if d, _ := nvconf.BackupDir(); d != "/home/u/.local/state/cxray/backups" {
		t.Errorf("backup dir %s", d)
	}
	got := nvconf.BackupPath("/b", "emu:lab.yaml@0000:03:00.0", time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC))
	if got != "/b/emu_lab.yaml_0000_03_00.0-20250102T030405.000000006Z.nvbackup" {
		t.Errorf("backup path %s", got)
	}
}

func TestJournalDamaged(t *testing.T) {
	j := nvconf.Journal{Dir: t.TempDir()}
	os.WriteFile(filepath.Join(j.Dir, "k.json"), []byte(`{"format":"other"}`), 0o600)
	if _, err := j.Pending("k"); err == nil || !strings.Contains(err.Error(), "is not cxray's or is damaged") {
		t.Errorf("%v", err)
	}
	e := &nvconf.JournalEntry{Key: "k2", Device: "emu", Op: "reset", All: true, Resets: []uint32{0x80}}
	if err := j.Begin(e); err != nil {
		t.Fatal(err)
	}
	back, err := j.Pending("k2")
	if err != nil || back.Op != "reset" || !back.All || back.Format == "" || back.PID != os.Getpid() {
		t.Errorf("%+v %v", back, err)
	}
	ie := nvconf.Interrupted(back, load(t))
	if d := cmp.Diff([]string{"nv_global_pci_conf (reset)", "the whole NV area (reset)"}, ie.Names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	if err := (nvconf.Journal{Dir: "/proc/no/such"}).Begin(&nvconf.JournalEntry{Key: "x"}); err == nil || !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("unwritable journal: %v", err)
	}
}

// A reset armed for the next reboot is readable where the database has
// MFRL reset_state (PRM Rev 0.59+): Waiting_For_Reset_Trigger until the
// reboot; with Rev 0.57 the state is unknown (""), never "idle".
func TestResetStateArmed(t *testing.T) {
	db, err := adb.LoadFile(filepath.Join(prmhistorytest.Require(t), "hca-ext-rev0.64.adb"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		r    *rig
		want string
	}{{"Rev 0.64", newRigWith(t, db, nil, nil), nvconf.ResetStateArmed}, {"Rev 0.57", newRig(t, nil), ""}} {
		r := c.r
		r.set("NUM_OF_VFS=4")
		r.reopen()
		p, err := r.s.PlanApply(r.ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.s.Apply(r.ctx, p); err != nil {
			t.Fatal(err)
		}
		caps, err := r.s.FirmwareResetCaps(r.ctx)
		if err != nil || caps.State != c.want || caps.Armed() != (c.want != "") {
			t.Errorf("%s: armed: %+v %v, want state %q", c.name, caps, err, c.want)
		}
		if !r.store.Reboot() {
			t.Fatalf("%s: no reset at reboot", c.name)
		}
		r.reopen()
		if caps, _ := r.s.FirmwareResetCaps(r.ctx); caps.Armed() {
			t.Errorf("%s: still armed after the reboot: %+v", c.name, caps)
		}
	}
}

// Settled reads what a verified set wrote again and names each parameter
// another writer changed since: ours (the change is lost) or a neighbour
// in the same TLV (issue 26.2).
func TestSettled(t *testing.T) {
	r := newRig(t, nil)
	p, err := r.plan("NUM_OF_VFS=16")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.s.ApplySet(r.ctx, p); err != nil {
		t.Fatal(err)
	}
	if d, err := r.s.Settled(r.ctx, p); err != nil || len(d) != 0 {
		t.Fatalf("nobody else wrote: %+v %v", d, err)
	}
	// Another writer's read-modify-write, from a session of its own (as
	// mstconfig's is): our parameter back to 4, a neighbour changed too.
	other, err := nvconf.Open(r.ctx, r.dev, r.db)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := nvconf.ParseAssignments([]string{"NUM_OF_VFS=4", "SRIOV_EN=False"})
	op, err := other.PlanSet(r.ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.ApplySet(r.ctx, op); err != nil {
		t.Fatal(err)
	}
	d, err := r.s.Settled(r.ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []nvconf.Drift{
		{TLV: "nv_global_pci_conf", Param: "SRIOV_EN", Wrote: "True(1)", Now: "False(0)"},
		{TLV: "nv_global_pci_conf", Param: "NUM_OF_VFS", Wrote: "16", Now: "4", Ours: true},
	}
	sort.Slice(d, func(i, j int) bool { return d[i].Param > d[j].Param })
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("drift (-want +got):\n%s", diff)
	}
}
