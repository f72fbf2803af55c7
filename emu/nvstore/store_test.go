package nvstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/nvstore"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/builtin"
	prmbuiltin "github.com/cxray/cxray/prm/builtin"
)

// rig is an emulated adapter with the NV store installed and an nvconf
// session over the real access path (gateway, ICMD, access registers).
type rig struct {
	t     *testing.T
	fw    *fw.Firmware
	store *nvstore.Store
	sess  *nvconf.Session
	dev   *dev.Device
	ctx   context.Context
}

func newRig(t *testing.T, profile string, mod func(*nvstore.Defaults)) *rig {
	t.Helper()
	pdb, err := prmbuiltin.Load()
	if err != nil {
		t.Fatal(err)
	}
	// The scenario installs the store with the profile's defaults; a test
	// changes them through the device spec, as a scenario file would.
	sc, err := scenario.FromProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := nvstore.ProfileDefaults(profile); !ok {
		t.Fatalf("no NV defaults for %s", profile)
	}
	if mod != nil {
		mod(&sc.Devices[0].NV)
	}
	e, err := scenario.Build(sc, scenario.Options{DB: pdb})
	if err != nil {
		t.Fatal(err)
	}
	d, f := e.Functions()[0].Device, e.Adapters[0].Firmware
	st, ok := nvstore.Lookup(f)
	if !ok {
		t.Fatal("the scenario did not install the NV store")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	dv, _, err := dev.OpenConfigSpace(ctx, "emu", "0000:03:00.0", "emulator", pdb, d, dev.StackOptions{SemaphoreTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, fw: f, store: st, dev: dv, ctx: ctx}
	r.reopen()
	return r
}

// reopen starts a fresh session (no cached reads).
func (r *rig) reopen() {
	r.t.Helper()
	nv, err := builtin.Load()
	if err != nil {
		r.t.Fatal(err)
	}
	if r.sess, err = nvconf.Open(r.ctx, r.dev, nv); err != nil {
		r.t.Fatal(err)
	}
}

// values queries and returns name -> [default, current, next].
func (r *rig) values(names ...string) map[string][3]string {
	r.t.Helper()
	res, err := r.sess.Query(r.ctx, nvconf.QueryOptions{Names: names, Extended: true})
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[string][3]string{}
	for _, s := range res.Settings {
		out[s.Name] = [3]string{s.Default.Text, s.Current.Text, s.Next.Text}
	}
	return out
}

func (r *rig) set(as ...string) error {
	r.t.Helper()
	a, err := nvconf.ParseAssignments(as)
	if err != nil {
		r.t.Fatal(err)
	}
	plan, err := r.sess.PlanSet(r.ctx, a)
	if err != nil {
		return err
	}
	return r.sess.ApplySet(r.ctx, plan)
}

func TestProfileValues(t *testing.T) {
	r := newRig(t, "cx7-2p400g", nil)
	v := r.values("SRIOV_EN", "NUM_OF_VFS", "LINK_TYPE", "LOG_TX_PSN_WINDOW", "AUTO_POWER_SAVE_LINK_DOWN_P1")
	want := map[string][3]string{
		"SRIOV_EN":                     {"False(0)", "True(1)", "True(1)"},
		"NUM_OF_VFS":                   {"0", "8", "8"},
		"LINK_TYPE_P1":                 {"ETH(2)", "ETH(2)", "ETH(2)"},
		"LINK_TYPE_P2":                 {"ETH(2)", "ETH(2)", "ETH(2)"},
		"LOG_TX_PSN_WINDOW":            {"9", "9", "9"},
		"AUTO_POWER_SAVE_LINK_DOWN_P1": {"False(0)", "False(0)", "False(0)"},
	}
	for n, w := range want {
		if v[n] != w {
			t.Errorf("%s = %v, want %v", n, v[n], w)
		}
	}
	// The ConnectX-6 Dx profile has an older keep-link-up TLV (version 2):
	// AUTO_POWER_SAVE_LINK_DOWN (from version 3) is not listed.
	r6 := newRig(t, "cx6dx-2p100g", nil)
	res, err := r6.sess.Query(r6.ctx, nvconf.QueryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Settings {
		if strings.HasPrefix(s.Name, "AUTO_POWER_SAVE_LINK_DOWN") || s.Name == "RDMA_SELECTIVE_REPEAT_EN" {
			t.Errorf("%s is listed on the ConnectX-6 Dx", s.Name)
		}
		if s.Name == "LOG_TX_PSN_WINDOW" && s.Next.Text != "7" {
			t.Errorf("cx6dx LOG_TX_PSN_WINDOW %s", s.Next.Text)
		}
	}
}

// set changes Next Boot only; a link-toggle reset (MFRL) applies it; a
// PERST-armed one waits for the reboot.
func TestSetApply(t *testing.T) {
	r := newRig(t, "cx7-2p400g", nil)
	if err := r.set("SRIOV_EN=False", "NUM_OF_VFS=16", "LINK_TYPE_P1=IB"); err != nil {
		t.Fatal(err)
	}
	r.reopen()
	v := r.values("SRIOV_EN", "NUM_OF_VFS", "LINK_TYPE_P1", "LINK_TYPE_P2")
	if v["SRIOV_EN"] != [3]string{"False(0)", "True(1)", "False(0)"} || v["NUM_OF_VFS"] != [3]string{"0", "8", "16"} ||
		v["LINK_TYPE_P1"] != [3]string{"ETH(2)", "ETH(2)", "IB(1)"} || v["LINK_TYPE_P2"][2] != "ETH(2)" {
		t.Fatalf("after set: %v", v)
	}
	if err := r.sess.FirmwareReset(r.ctx, nvconf.TriggerPERST); err != nil {
		t.Fatal(err)
	}
	if v := r.values("NUM_OF_VFS"); v["NUM_OF_VFS"][1] != "8" || !r.store.Armed() {
		t.Fatalf("a PERST trigger applied at once: %v", v)
	}
	if !r.store.Reboot() {
		t.Fatal("the armed reset did not happen at reboot")
	}
	r.reopen()
	if v := r.values("NUM_OF_VFS", "LINK_TYPE_P1"); v["NUM_OF_VFS"][1] != "16" || v["LINK_TYPE_P1"][1] != "IB(1)" {
		t.Fatalf("after reboot: %v", v)
	}
	if r.store.Reboot() {
		t.Error("a second reboot without an armed reset reset the firmware")
	}
	if err := r.set("NUM_OF_VFS=4"); err != nil {
		t.Fatal(err)
	}
	caps, err := r.sess.FirmwareResetCaps(r.ctx)
	if err != nil || caps.Triggers&nvconf.TriggerLinkToggle == 0 {
		t.Fatalf("MFRL caps %+v %v", caps, err)
	}
	if err := r.sess.FirmwareReset(r.ctx, nvconf.TriggerLinkToggle); err != nil {
		t.Fatal(err)
	}
	if v := r.values("NUM_OF_VFS"); v["NUM_OF_VFS"] != [3]string{"0", "4", "4"} {
		t.Fatalf("after the link-toggle reset: %v", v)
	}
	if err := r.sess.FirmwareReset(r.ctx, 0x48); err == nil {
		t.Error("two triggers at once were accepted")
	}
}

// Values the database or the device's capabilities refuse are refused
// before anything is written, with the allowed values named.
func TestValidation(t *testing.T) {
	r := newRig(t, "cx7-2p400g", nil)
	err := r.set("NUM_OF_VFS=128", "LINK_TYPE_P1=FC", "SRIOV_EN=2", "LOG_TX_PSN_WINDOW=64", "NUM_OF_PF=3", "nv_global_pci_conf.sriov_valid=1")
	var ve *nvconf.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 6 {
		t.Fatalf("%v", err)
	}
	for _, want := range []string{"above the maximum 127", "allowed: IB(1), ETH(2)", "allowed: True(1), False(0)", "0..63", "allowed: 0..2", "internal field"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q missing from: %v", want, err)
		}
	}
	if n := len(r.store.Stored()); n != 1 {
		t.Errorf("the store has %d written TLVs; a refused set wrote something", n)
	}
	// Capabilities decide: without SR-IOV support, SRIOV_EN is not available.
	r2 := newRig(t, "cx7-2p400g", func(d *nvstore.Defaults) { d.Factory = map[string]string{"nv_global_pci_cap.sriov_support": "0"} })
	if err := r2.set("SRIOV_EN=True"); err == nil || !strings.Contains(err.Error(), "sriov_support==1 is false") {
		t.Errorf("SRIOV_EN without sriov_support: %v", err)
	}
	// The firmware checks too: a raw write past the limit is rejected (0x20).
	in := nvconf.Instance{TLV: r.sess.DB.TLV("nv_global_pci_conf")}
	it, err := r.sess.Read(r.ctx, in, nvconf.ModeNext)
	if err != nil {
		t.Fatal(err)
	}
	data := append([]byte(nil), it.Data...)
	_ = in.TLV.Param("total_vfs").Set(data, 0, 500)
	err = r.sess.WriteTLV(r.ctx, in, data, 0)
	var nv *nvconf.NVError
	if !errors.As(err, &nv) || nv.Status != regaccess.StatusBadConfig || !strings.Contains(err.Error(), "rejected") {
		t.Errorf("raw NUM_OF_VFS=500: %v", err)
	}
}

func TestWalkResetBackup(t *testing.T) {
	r := newRig(t, "cx7-2p400g", nil)
	stored, err := r.sess.Walk(r.ctx)
	if err != nil || len(stored) != 1 || stored[0].Header.Type != 0x80 {
		t.Fatalf("walk %+v %v", stored, err)
	}
	if err := r.set("LINK_TYPE_P2=IB", "KEEP_ETH_LINK_UP_P1=False", "LOG_TX_PSN_WINDOW=12"); err != nil {
		t.Fatal(err)
	}
	stored, err = r.sess.Walk(r.ctx)
	if err != nil || len(stored) != 4 {
		t.Fatalf("walk %d %v", len(stored), err)
	}
	backup := stored
	// MNVDI of one TLV, then MNVIA of all.
	if err := r.sess.Invalidate(r.ctx, nvconf.Instance{TLV: r.sess.DB.TLV("nv_vpi_link_type"), Port: 2}); err != nil {
		t.Fatal(err)
	}
	if v := r.values("LINK_TYPE_P2"); v["LINK_TYPE_P2"][2] != "ETH(2)" {
		t.Errorf("after MNVDI: %v", v)
	}
	if err := r.sess.InvalidateAll(r.ctx); err != nil {
		t.Fatal(err)
	}
	if stored, err := r.sess.Walk(r.ctx); err != nil || len(stored) != 0 {
		t.Fatalf("after MNVIA the walk gives %d %v (want an empty area)", len(stored), err)
	}
	if v := r.values("SRIOV_EN"); v["SRIOV_EN"] != [3]string{"False(0)", "True(1)", "False(0)"} {
		t.Errorf("after MNVIA: %v", v)
	}
	// Restore the backup: the walk gives the same TLVs in the same order.
	for _, t2 := range backup {
		if err := r.sess.WriteRaw(r.ctx, t2); err != nil {
			t.Fatal(err)
		}
	}
	again, err := r.sess.Walk(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(backup) {
		t.Fatalf("%d TLVs after restore, want %d", len(again), len(backup))
	}
	for i := range backup {
		if !backup[i].Equal(again[i]) || backup[i].Header.WriterID != again[i].Header.WriterID {
			t.Errorf("TLV %d: %+v vs %+v", i, backup[i].Header, again[i].Header)
		}
	}
}

func TestFaults(t *testing.T) {
	r := newRig(t, "cx7-2p400g", nil)
	if err := r.store.SetFaults(nvstore.Faults{RejectWrites: []string{"nv_vpi_link_type"}}); err != nil {
		t.Fatal(err)
	}
	err := r.set("LINK_TYPE_P1=IB")
	var nv *nvconf.NVError
	if !errors.As(err, &nv) || nv.Status != 0x20 {
		t.Errorf("rejected write: %v", err)
	}
	if err := r.set("NUM_OF_VFS=2"); err != nil {
		t.Errorf("another TLV: %v", err)
	}
	// Two more writes, then the flash wears out.
	if err := r.store.SetFaults(nvstore.Faults{EraseBudget: 2}); err != nil {
		t.Fatal(err)
	}
	for i, v := range []string{"3", "4"} {
		if err := r.set("NUM_OF_VFS=" + v); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	err = r.set("NUM_OF_VFS=5")
	if !errors.As(err, &nv) || nv.Status != 0x21 || !strings.Contains(err.Error(), "erase limit") {
		t.Errorf("worn flash: %v", err)
	}
	if !r.store.Faults().EraseExceeded {
		t.Error("the budget did not run out")
	}
	// No NV access at all: the session says so when it opens.
	if err := r.store.SetFaults(nvstore.Faults{NoAccess: true}); err != nil {
		t.Fatal(err)
	}
	_, err = nvconf.Open(r.ctx, r.dev, r.sess.DB)
	if !errors.As(err, &nv) || nv.Status != 4 || !strings.Contains(err.Error(), "does not offer NV configuration") {
		t.Errorf("no access: %v", err)
	}
	if err := r.store.SetFaults(nvstore.Faults{NoAccess: true, NoAccessStatus: 7}); err != nil {
		t.Fatal(err)
	}
	if _, err = nvconf.Open(r.ctx, r.dev, r.sess.DB); err == nil || !strings.Contains(err.Error(), "refuses NV configuration access") {
		t.Errorf("no access (status 7): %v", err)
	}
	if err := r.store.SetFaults(nvstore.Faults{RejectWrites: []string{"nv_nonsense"}}); err == nil {
		t.Error("an unknown TLV was accepted")
	}
}

func TestNoDefaultOrCurrent(t *testing.T) {
	r := newRig(t, "cx7-2p400g", func(d *nvstore.Defaults) { d.NoReadDefault, d.NoReadCurrent = true, true })
	if r.sess.ReadDefault || r.sess.ReadCurrent {
		t.Fatal("MNVGC bits")
	}
	res, err := r.sess.Query(r.ctx, nvconf.QueryOptions{Names: []string{"NUM_OF_VFS"}, Extended: true})
	if err != nil || len(res.Settings) != 1 || res.Settings[0].Default != nil || res.Settings[0].Current != nil || res.Settings[0].Next.Text != "8" {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestStateAndInstall(t *testing.T) {
	r := newRig(t, "cx7-2p400g", nil)
	if err := r.set("NUM_OF_VFS=32", "LINK_TYPE_P2=IB"); err != nil {
		t.Fatal(err)
	}
	if err := r.sess.FirmwareReset(r.ctx, nvconf.TriggerPERST); err != nil {
		t.Fatal(err)
	}
	st := r.store.State()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh adapter with the saved state holds the same configuration.
	r2 := newRig(t, "cx7-2p400g", nil)
	var st2 nvstore.State
	if err := json.Unmarshal(b, &st2); err != nil {
		t.Fatal(err)
	}
	if err := r2.store.SetState(st2); err != nil {
		t.Fatal(err)
	}
	r2.reopen()
	if v := r2.values("NUM_OF_VFS", "LINK_TYPE_P2"); v["NUM_OF_VFS"] != [3]string{"0", "8", "32"} || v["LINK_TYPE_P2"][2] != "IB(1)" || !r2.store.Armed() {
		t.Errorf("restored state: %v armed=%v", v, r2.store.Armed())
	}
	if err := r2.store.SetState(nvstore.State{Records: []nvstore.StateTLV{{Type: "0x00000080", Data: "00"}}}); err == nil {
		t.Error("a short record was accepted")
	}
	// Install is idempotent and Lookup finds the store.
	again, err := nvstore.InstallProfile(r.fw, "cx7-2p400g")
	if err != nil || again != r.store {
		t.Errorf("second install: %v %v", again == r.store, err)
	}
	if s, ok := nvstore.Lookup(r.fw); !ok || s != r.store {
		t.Error("lookup")
	}
	if got, err := r.store.Get("LINK_TYPE_P2", nvconf.ModeNext); err != nil || got != "IB(1)" {
		t.Errorf("Get: %s %v", got, err)
	}
}

func TestDefaultsErrors(t *testing.T) {
	pdb, _ := prmbuiltin.Load()
	for name, d := range map[string]nvstore.Defaults{
		"unknown parameter": {Factory: map[string]string{"NO_SUCH_THING": "1"}},
		"bad value":         {Factory: map[string]string{"LINK_TYPE": "FC"}},
		"unknown TLV":       {Unsupported: []string{"nv_nothing"}},
		"bad version":       {Versions: map[string]int{"nv_keep_link_up": 16}},
	} {
		if _, err := nvstore.New(nvstore.Options{PRM: pdb, Ports: 2, Defaults: d}); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if _, err := nvstore.New(nvstore.Options{}); err == nil {
		t.Error("no PRM database accepted")
	}
	for _, p := range nvstore.Profiles() {
		if _, err := nvstore.New(nvstore.Options{PRM: pdb, Ports: 2, Defaults: must(nvstore.ProfileDefaults(p))}); err != nil {
			t.Errorf("profile %s: %v", p, err)
		}
	}
}

func must(d nvstore.Defaults, _ bool) nvstore.Defaults { return d }
