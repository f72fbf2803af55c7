package snapshot

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/feature/caps"
)

// withState is a one-device file with the sections around the registers.
func withState(pending, mac, window string, capMax uint64, nvErr string) *File {
	f := file("Rev 0.57")
	d := &f.Devices[0]
	d.Identity.FirmwarePending = pending
	d.NV = &NVConfig{Error: nvErr}
	if nvErr == "" {
		d.NV.Settings = []NVSetting{{Name: "LOG_TX_PSN_WINDOW", Next: window, Current: "9", Class: Static}, {Name: "SRIOV_EN", Next: "True(1)", Current: "True(1)", Class: Static}}
	}
	d.OS = &OSView{Netdevs: []NetdevMAC{{Name: "ens1f0np0", Address: mac, PermanentAddress: "b8:3f:d2:a1:b2:c0"}}}
	d.Caps = &Capabilities{Report: &caps.Report{Pages: []caps.Page{{Type: "GENERAL", Fields: []caps.Field{{Path: "log_max_qp", Current: 17, Max: capMax, Text: "17", MaxText: itoa(capMax)}}}}}}
	return f
}

func itoa(n uint64) string { return Num(n).String() }

func staticKeys(r *Report) map[string]string {
	m := map[string]string{}
	for _, c := range r.Static {
		m[c.Register+" "+c.Path] = c.OldText + " → " + c.NewText
	}
	return m
}

// Pending firmware, NV values, the OS's MAC and capabilities are static:
// each change is listed and makes Problems true.
func TestDiffState(t *testing.T) {
	base := withState("", "b8:3f:d2:a1:b2:c0", "9", 17, "")
	same := Diff(base, withState("", "b8:3f:d2:a1:b2:c0", "9", 17, ""), nil)
	if same.Problems() || len(same.Notes) > 0 {
		t.Errorf("identical state: problems %v, notes %v, static %v", same.Problems(), same.Notes, same.Static)
	}
	r := Diff(base, withState("28.40.1000", "02:00:00:00:00:01", "14", 18, ""), nil)
	want := map[string]string{
		"identity firmware_pending":       "(none) → 28.40.1000",
		"NV[next_boot] LOG_TX_PSN_WINDOW": "9 → 14",
		"OS[netdev=ens1f0np0] address":    "b8:3f:d2:a1:b2:c0 → 02:00:00:00:00:01",
		"CAPS[GENERAL] log_max_qp":        "17 (max 17) → 17 (max 18)",
	}
	if d := cmp.Diff(want, staticKeys(r)); d != "" || !r.Problems() {
		t.Errorf("static changes (-want +got):\n%s (problems %v)", d, r.Problems())
	}
	// NV readable in the baseline and unreadable now vanished; the other
	// way round it is an error of the baseline, not a finding.
	r = Diff(base, withState("", "b8:3f:d2:a1:b2:c0", "9", 17, "MNVDA: bad parameter"), nil)
	if len(r.Vanished) != 1 || r.Vanished[0].Register != "NV" || !strings.Contains(r.Vanished[0].Note, "bad parameter") {
		t.Errorf("NV unreadable now: vanished %+v", r.Vanished)
	}
	r = Diff(withState("", "b8:3f:d2:a1:b2:c0", "9", 17, "MNVDA: bad parameter"), base, nil)
	if r.Problems() || len(r.Errors) != 1 {
		t.Errorf("NV unreadable in the baseline: problems %v, errors %v", r.Problems(), r.Errors)
	}
	// A parameter the device lists only now appeared; one it no longer
	// lists disappeared: neither is a problem by itself.
	more := withState("", "b8:3f:d2:a1:b2:c0", "9", 17, "")
	more.Devices[0].NV.Settings = append(more.Devices[0].NV.Settings, NVSetting{Name: "NUM_OF_VFS", Next: "8", Class: Static})
	if r := Diff(base, more, nil); r.Problems() || len(r.Appeared) != 1 || r.Appeared[0].Path != "NUM_OF_VFS" {
		t.Errorf("appeared parameter: problems %v, appeared %+v", r.Problems(), r.Appeared)
	}
	if r := Diff(more, base, nil); r.Problems() || len(r.Disappeared) != 1 || r.Disappeared[0].Path != "NUM_OF_VFS" {
		t.Errorf("disappeared parameter: problems %v, disappeared %+v", r.Problems(), r.Disappeared)
	}
	// An interface gone is a finding.
	gone := withState("", "b8:3f:d2:a1:b2:c0", "9", 17, "")
	gone.Devices[0].OS.Netdevs = nil
	if r := Diff(base, gone, nil); len(r.Vanished) != 1 || r.Vanished[0].Register != "OS[netdev=ens1f0np0]" {
		t.Errorf("interface gone: vanished %+v", r.Vanished)
	}
	// No command interface now: said, not compared.
	nocmd := withState("", "b8:3f:d2:a1:b2:c0", "9", 17, "")
	nocmd.Devices[0].Caps = &Capabilities{Note: "no command interface on this backend"}
	if r := Diff(base, nocmd, nil); r.Problems() || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "no command interface") {
		t.Errorf("caps missing now: problems %v, notes %v", r.Problems(), r.Notes)
	}
}
