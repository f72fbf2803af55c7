package snapshot_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/feature/snapshot"
	"github.com/cxray/cxray/internal/clock"
)

var start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

type osView struct{}

func (osView) OS(context.Context) (*adapter.OS, error) { return &adapter.OS{Driver: "mlx5_core"}, nil }
func (osView) RDMACounters(context.Context, int) (map[string]uint64, error) {
	return nil, errors.ErrUnsupported
}

// second is function 1 of a two-port adapter: it owns local port 2, on
// module 1.
func second(t *testing.T) (*adapter.Adapter, *devtest.Fake, *clock.Manual) {
	db := devtest.DB(t)
	f := devtest.New(db)
	f.Put("MGIR", "hw_info.num_ports=2", "hw_info.uptime=1000", "fw_info.extended_major=28", "fw_info.extended_minor=39",
		"fw_info.extended_sub_minor=1002", "fw_info.psid=MT_0000000838")
	f.Put("PMLP", "local_port=2", "width=4", "lane_module_mapping[0].module=1")
	f.Put("PAOS", "local_port=2", "admin_status=up", "oper_status=up")
	f.Put("PMAOS", "module=1", "oper_status=plugged_enabled")
	f.Put("MTMP", "sensor_index=0", "temperature=400")
	f.Put("MTMP", "sensor_index=65", "temperature=320")
	f.Put("PPCNT", "local_port=2", "grp=0", "counter_set.eth_802_3_cntrs_grp_data_layout_ext.a_frames_transmitted_ok=1000")
	clk := clock.NewManual(start)
	a := adapter.New(adapter.Config{Name: "emu:t.yaml@0000:03:00.1", BDF: "0000:03:00.1", Backend: dev.BackendEmulator, DB: db,
		Registers: f.Device("t", "0000:03:00.1", dev.BackendEmulator), Clock: clk, OSView: osView{}})
	return a, f, clk
}

func profile(t *testing.T, name string) *snapshot.Profile {
	t.Helper()
	p, err := snapshot.LoadProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Per-port, per-module and per-sensor registers expand over the ports
// the function owns (adapter.Ports), not 1..MGIR num_ports.
func TestTakeExpandsOverOwnedPorts(t *testing.T) {
	a, _, _ := second(t)
	d, err := snapshot.Take(context.Background(), a, profile(t, "standard"), snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	errs := map[string]bool{}
	for _, r := range d.Registers {
		keys = append(keys, r.Key)
		errs[r.Key] = r.Error != ""
	}
	want := []string{"MGIR", "PGUID[local_port=2]", "PAOS[local_port=2]", "PTYS[proto_mask=4,local_port=2]", "PMLP[local_port=2]",
		"PMAOS[module=1]", "MTMP[sensor_index=0]", "MTMP[sensor_index=65]", "PDDR[page_select=0,local_port=2]",
		"PPCNT[grp=0,local_port=2]", "PPCNT[grp=1,local_port=2]", "ROCE_ACCL"}
	if d := cmp.Diff(want, keys); d != "" {
		t.Errorf("instances (-want +got):\n%s", d)
	}
	// Registers the fake lacks are recorded with their error, not fatal.
	for _, k := range []string{"PGUID[local_port=2]", "PTYS[proto_mask=4,local_port=2]", "PDDR[page_select=0,local_port=2]", "PPCNT[grp=1,local_port=2]", "ROCE_ACCL"} {
		if !errs[k] {
			t.Errorf("%s has no error", k)
		}
	}
	if errs["PAOS[local_port=2]"] || errs["MTMP[sensor_index=65]"] {
		t.Errorf("readable registers have errors: %v", errs)
	}
	if d.Name != "emu:t.yaml@0000:03:00.1" || d.BDF != "0000:03:00.1" || d.Backend != dev.BackendEmulator || d.Driver != "mlx5_core" ||
		d.Identity.Firmware != "28.39.1002" || d.Identity.PSID != "MT_0000000838" {
		t.Errorf("device %+v", d)
	}
	if r := d.Registers[2]; cmp.Diff(map[string]string{"local_port": "2"}, r.Index) != "" || r.ID != 0x5006 {
		t.Errorf("PAOS index %v id 0x%x", r.Index, r.ID)
	}
}

// A port that runs InfiniBand (PDDR's proto_active) is asked PTYS's IB
// fields and PPCNT's InfiniBand counters, not the Ethernet ones.
func TestTakeInfiniBandPort(t *testing.T) {
	a, f, _ := second(t)
	f.Put("PDDR", "local_port=2", "page_select=0", "page_data.pddr_operation_info_page_ext.proto_active=1")
	d, err := snapshot.Take(context.Background(), a, profile(t, "standard"), snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range d.Registers {
		keys = append(keys, r.Key)
	}
	want := []string{"MGIR", "PGUID[local_port=2]", "PAOS[local_port=2]", "PTYS[proto_mask=1,local_port=2]", "PMLP[local_port=2]",
		"PMAOS[module=1]", "MTMP[sensor_index=0]", "MTMP[sensor_index=65]", "PDDR[page_select=0,local_port=2]",
		"PPCNT[grp=33,local_port=2]", "ROCE_ACCL"}
	if d := cmp.Diff(want, keys); d != "" {
		t.Errorf("instances (-want +got):\n%s", d)
	}
	for _, bad := range []string{"link_layer: Fibre", "per: module\n    link_layer: Ethernet"} {
		y := "registers:\n  - register: PTYS\n    " + bad + "\n"
		if !strings.Contains(bad, "per:") {
			y = "registers:\n  - register: PTYS\n    per: port\n    " + bad + "\n"
		}
		if _, err := snapshot.ParseProfile([]byte(y), "p.yaml"); err == nil || !strings.Contains(err.Error(), "link_layer") {
			t.Errorf("%q: %v, want a link_layer error", bad, err)
		}
	}
}

func field(t *testing.T, d *snapshot.Device, key, path string) snapshot.Field {
	t.Helper()
	for _, r := range d.Registers {
		if r.Key != key {
			continue
		}
		for _, f := range r.Fields {
			if f.Path == path {
				return f
			}
		}
		t.Fatalf("%s has no field %s", key, path)
	}
	t.Fatalf("no register %s", key)
	return snapshot.Field{}
}

// Several samples: fields are classed by the rules, and a field no rule
// calls dynamic that moved is learned dynamic.
func TestTakeClassesAndLearns(t *testing.T) {
	a, f, clk := second(t)
	n := 0
	sleep := func(ctx context.Context, d time.Duration) error {
		clk.Advance(d)
		n++
		f.Put("MGIR", "hw_info.num_ports=2", "hw_info.uptime="+strconv.Itoa(1000+60*n), "fw_info.extended_major=28")
		f.Put("MTMP", "sensor_index=0", "temperature="+strconv.Itoa(400+n))
		f.Put("PMLP", "local_port=2", "width=4", "lane_module_mapping[0].module=1", "lane_module_mapping[0].tx_lane="+strconv.Itoa(n))
		return nil
	}
	var progress []int
	d, err := snapshot.Take(context.Background(), a, profile(t, "standard"), snapshot.Options{Samples: 3, Interval: time.Minute, Sleep: sleep,
		Progress: func(done, total int) {
			if total != 36 {
				t.Errorf("total %d", total)
			}
			progress = append(progress, done)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(progress) != 36 || progress[35] != 36 || n != 2 {
		t.Errorf("progress %v, %d sleeps", progress, n)
	}
	type cls struct {
		Class                 string
		Learned, Expect, Half bool
		Values                int
	}
	got := func(key, path string) cls {
		x := field(t, d, key, path)
		return cls{x.Class, x.Learned, x.ExpectMotion, x.Half, len(x.Values)}
	}
	for _, c := range []struct {
		key, path string
		want      cls
	}{
		{"MGIR", "hw_info.uptime", cls{Class: snapshot.Counter, Expect: true, Values: 3}},
		{"MTMP[sensor_index=0]", "temperature", cls{Class: snapshot.Dynamic, Expect: true, Values: 3}},
		{"MTMP[sensor_index=0]", "sensor_index", cls{Class: snapshot.Static, Values: 3}},
		{"PAOS[local_port=2]", "oper_status", cls{Class: snapshot.Dynamic, Values: 3}},
		{"PAOS[local_port=2]", "admin_status", cls{Class: snapshot.Static, Values: 3}},
		// No rule says it moves; it did: learned.
		{"PMLP[local_port=2]", "lane_module_mapping[0].tx_lane", cls{Class: snapshot.Dynamic, Learned: true, Values: 3}},
		{"PPCNT[grp=0,local_port=2]", "counter_set.eth_802_3_cntrs_grp_data_layout_ext.a_frames_transmitted_ok", cls{Class: snapshot.Counter, Values: 3}},
		{"PPCNT[grp=0,local_port=2]", "counter_set.eth_802_3_cntrs_grp_data_layout_ext.a_frames_transmitted_ok_low", cls{Class: snapshot.Counter, Half: true, Values: 3}},
	} {
		if g := got(c.key, c.path); g != c.want {
			t.Errorf("%s %s: %+v, want %+v", c.key, c.path, g, c.want)
		}
	}
	up := field(t, d, "MGIR", "hw_info.uptime")
	if d := cmp.Diff([]snapshot.Val{snapshot.Num(1000), snapshot.Num(1060), snapshot.Num(1120)}, up.Values); d != "" || !up.Value.Equal(snapshot.Num(1120)) {
		t.Errorf("uptime samples (-want +got):\n%s", d)
	}
	// Write-only and operation fields hold no state: not recorded.
	for _, r := range d.Registers {
		if r.Key == "PAOS[local_port=2]" {
			for _, f := range r.Fields {
				if f.Path == "ase" || f.Path == "ee" {
					t.Errorf("WO field %s recorded", f.Path)
				}
			}
			if len(r.Times) != 3 || r.Times[2].Sub(r.Times[0]) != 2*time.Minute {
				t.Errorf("times %v", r.Times)
			}
		}
	}
	// An enum field keeps its name as text.
	if f := field(t, d, "PAOS[local_port=2]", "oper_status"); f.Text != "up (1)" || !f.Value.Equal(snapshot.Num(1)) {
		t.Errorf("oper_status %+v", f)
	}
}

// By default the samples wait on the adapter's clock (the emulator's
// manual one advances).
func TestTakeSleepsOnTheAdapterClock(t *testing.T) {
	a, _, clk := second(t)
	d, err := snapshot.Take(context.Background(), a, profile(t, "minimal"), snapshot.Options{Samples: 2, Interval: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !clk.Now().Equal(start.Add(5*time.Minute)) || d.Registers[0].Times[1].Sub(d.Registers[0].Times[0]) != 5*time.Minute {
		t.Errorf("clock %v, times %v", clk.Now(), d.Registers[0].Times)
	}
	// A single sample keeps no list of values.
	d, _ = snapshot.Take(context.Background(), a, profile(t, "minimal"), snapshot.Options{})
	if f := field(t, d, "MGIR", "hw_info.num_ports"); f.Values != nil || !f.Value.Equal(snapshot.Num(2)) {
		t.Errorf("one sample: %+v", f)
	}
	// A cancelled context stops between samples.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := snapshot.Take(ctx, a, profile(t, "minimal"), snapshot.Options{Samples: 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestTakeRefuses(t *testing.T) {
	db := devtest.DB(t)
	k := adapter.New(adapter.Config{Name: "kernel:mlx5_0", Backend: dev.BackendKernel, DB: db})
	if _, err := snapshot.Take(context.Background(), k, profile(t, "minimal"), snapshot.Options{}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("kernel backend: %v", err)
	}
	f := devtest.New(db)
	a := adapter.New(adapter.Config{Name: "t", Backend: dev.BackendDirect, DB: db, Registers: f.Device("t", "", dev.BackendDirect)})
	if _, err := snapshot.Take(context.Background(), a, profile(t, "minimal"), snapshot.Options{}); !errors.Is(err, dev.ErrNotSupported) {
		t.Errorf("no MGIR: %v", err)
	}
}

// A baseline and a later snapshot of the same function: a configuration
// change is static, counters move with a rate, a temperature is dynamic.
func TestTakeAndDiff(t *testing.T) {
	ctx := context.Background()
	a, f, clk := second(t)
	p := profile(t, "standard")
	base, err := snapshot.Take(ctx, a, p, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(100 * time.Second)
	f.Put("PAOS", "local_port=2", "admin_status=down_by_configuration", "oper_status=down")
	f.Put("MTMP", "sensor_index=0", "temperature=408")
	f.Put("PPCNT", "local_port=2", "grp=0", "counter_set.eth_802_3_cntrs_grp_data_layout_ext.a_frames_transmitted_ok=6000")
	now, err := snapshot.Take(ctx, a, p, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bf := &snapshot.File{Format: snapshot.Format, Version: snapshot.Version, Created: start, Host: "h", PRMRevision: "Rev 0.57", Devices: []snapshot.Device{*base}}
	nf := &snapshot.File{Format: snapshot.Format, Version: snapshot.Version, Created: clk.Now(), Host: "h", PRMRevision: "Rev 0.57", Devices: []snapshot.Device{*now}}
	// Through the file format and back.
	dir := t.TempDir()
	for name, file := range map[string]*snapshot.File{"base.json": bf, "now.json": nf} {
		if err := snapshot.Write(filepath.Join(dir, name), file); err != nil {
			t.Fatal(err)
		}
	}
	bf, err = snapshot.Read(filepath.Join(dir, "base.json"))
	if err != nil {
		t.Fatal(err)
	}
	nf, _ = snapshot.Read(filepath.Join(dir, "now.json"))
	r := snapshot.Diff(bf, nf, nil)
	type ch struct{ Register, Path, Old, New string }
	list := func(cs []snapshot.Change) []ch {
		var out []ch
		for _, c := range cs {
			out = append(out, ch{c.Register, c.Path, c.OldText, c.NewText})
		}
		return out
	}
	if d := cmp.Diff([]ch{{"PAOS[local_port=2]", "admin_status", "up (1)", "down_by_configuration (2)"}}, list(r.Static)); d != "" {
		t.Errorf("static (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]ch{{"PAOS[local_port=2]", "oper_status", "up (1)", "down (2)"}, {"MTMP[sensor_index=0]", "temperature", "50 °C", "51 °C"}}, list(r.Dynamic)); d != "" {
		t.Errorf("dynamic (-want +got):\n%s", d)
	}
	// The temperature in its unit (1/8 °C raw), its delta in °C; an enum
	// has no delta; the raw values stay numbers.
	if len(r.Dynamic) == 2 {
		if tc := r.Dynamic[1]; tc.Unit != "°C" || tc.Delta == nil || *tc.Delta != 1 || cmp.Diff([]any{uint64(400), uint64(408)}, []any{tc.Old, tc.New}) != "" {
			t.Errorf("temperature change %+v", tc)
		}
		if r.Dynamic[0].Delta != nil {
			t.Errorf("an enum has a delta: %v", *r.Dynamic[0].Delta)
		}
	}
	// The joined counter, not its halves; 5000 frames in 100 s.
	if len(r.Counters) != 1 || r.Counters[0].Path != "counter_set.eth_802_3_cntrs_grp_data_layout_ext.a_frames_transmitted_ok" ||
		*r.Counters[0].Delta != 5000 || r.Counters[0].Rate == nil || *r.Counters[0].Rate != 50 {
		t.Errorf("counters %+v", r.Counters)
	}
	if !r.Problems() || len(r.Appeared)+len(r.Disappeared)+len(r.Stale) != 0 || len(r.Errors) != 0 || len(r.Notes) != 0 {
		t.Errorf("report %+v", r)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"baseline 2025-01-01T00:00:00Z (h, Rev 0.57) → 2025-01-01T00:01:40Z (h, Rev 0.57)\n",
		"\nSTATIC values changed — these should not (1):\n  0000:03:00.1 PAOS[local_port=2] admin_status: up (1) → down_by_configuration (2)\n",
		"\ncounters (1):\n  0000:03:00.1 PPCNT[grp=0,local_port=2] counter_set.eth_802_3_cntrs_grp_data_layout_ext.a_frames_transmitted_ok: 0x00000000000003e8 (1000) → 0x0000000000001770 (6000) (+5000, 50/s)\n",
		"\ndynamic values (2):\n",
		"  0000:03:00.1 MTMP[sensor_index=0] temperature: 50 °C → 51 °C (+1 °C)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	// Same device, nothing static: says so, with what moved.
	r = snapshot.Diff(nf, nf, nil)
	b.Reset()
	r.WriteText(&b, 0)
	if r.Problems() || !strings.HasSuffix(b.String(), "\nnothing vanished, no static changes\n") {
		t.Errorf("no change:\n%s", b.String())
	}
}

// Around the registers: identity and driver changes, devices in one
// snapshot only, registers that appeared, went or became unreadable. What
// was there and readable in the baseline and is missing or unreadable now
// has vanished: a finding, not a note.
func TestDiffNotesAndVanished(t *testing.T) {
	reg := func(key, errText string) snapshot.Register {
		r := snapshot.Register{Register: strings.SplitN(key, "[", 2)[0], Key: key, Error: errText}
		if errText == "" {
			r.Fields = []snapshot.Field{{Path: "x", Class: snapshot.Static, Value: snapshot.Num(1)}}
		}
		return r
	}
	base := &snapshot.File{PRMRevision: "Rev 0.57", Devices: []snapshot.Device{
		{BDF: "0000:03:00.0", Driver: "mlx5_core 6.6", Identity: adapter.Identity{Firmware: "28.39.1002", PSID: "MT_1"},
			Registers: []snapshot.Register{reg("A", ""), reg("B", "busy"), reg("C", ""), reg("D", "busy"), reg("E", "")}},
		{Name: "emu:x", Registers: []snapshot.Register{reg("A", "")}},
		{BDF: "0000:05:00.0", Registers: []snapshot.Register{reg("A", "")}},
	}}
	now := &snapshot.File{PRMRevision: "Rev 0.57", Devices: []snapshot.Device{
		{BDF: "0000:03:00.0", Driver: "mlx5_core 6.8", Identity: adapter.Identity{Firmware: "28.41.1000", PSID: "MT_1"},
			Registers: []snapshot.Register{reg("A", ""), reg("B", ""), reg("C", "gone"), reg("D", "busy"), reg("F", "")}},
		{BDF: "0000:04:00.0"},
		{BDF: "0000:05:00.0", Error: "device gone"},
	}}
	r := snapshot.Diff(base, now, nil)
	wantNotes := []string{
		"0000:03:00.0: firmware changed: 28.39.1002 → 28.41.1000",
		"0000:03:00.0: driver changed: mlx5_core 6.6 → mlx5_core 6.8",
		"device 0000:04:00.0 is only in the new snapshot",
	}
	if d := cmp.Diff(wantNotes, r.Notes); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
	type v struct{ Device, Register, Note string }
	var vanished []v
	for _, c := range r.Vanished {
		vanished = append(vanished, v{c.Device, c.Register, c.Note})
	}
	wantVanished := []v{
		{"0000:03:00.0", "C", "readable in the baseline, unreadable now: gone"},
		{"0000:03:00.0", "E", "in the baseline, not in the new snapshot"},
		{"emu:x", "", "the device is in the baseline but not in the new snapshot"},
		{"0000:05:00.0", "", "the device was read in the baseline and could not be read now: device gone"},
	}
	if d := cmp.Diff(wantVanished, vanished); d != "" {
		t.Errorf("vanished (-want +got):\n%s", d)
	}
	// Unreadable in the baseline is an error of the baseline, not a
	// finding; unreadable in both says nothing.
	if d := cmp.Diff([]string{"0000:03:00.0 B: unreadable in the baseline (busy)"}, r.Errors); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
	if len(r.Disappeared) != 0 || len(r.Appeared) != 1 || r.Appeared[0].Register != "F" || !r.Problems() || len(r.Static) != 0 {
		t.Errorf("disappeared %+v appeared %+v problems %v", r.Disappeared, r.Appeared, r.Problems())
	}
	var b bytes.Buffer
	r.WriteText(&b, 1)
	out := b.String()
	for _, want := range []string{
		"\nVANISHED — in the baseline, missing or unreadable now (4):\n  0000:03:00.0 C: readable in the baseline, unreadable now: gone\n  ... and 3 more (-o json lists them all)\n",
		"note: device 0000:04:00.0 is only in the new snapshot\n",
		"\nappeared (1):\n  0000:03:00.0 F  register not in the baseline\n",
		"\nerrors (1):\n  0000:03:00.0 B: unreadable in the baseline (busy)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	// Listed before every value change.
	if i := strings.Index(out, "VANISHED"); i < 0 || strings.Index(out, "appeared (") < i {
		t.Errorf("vanished is not listed first:\n%s", out)
	}
	if strings.Contains(out, "nothing vanished") {
		t.Errorf("says nothing vanished:\n%s", out)
	}
}

func TestReadChecks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	for name, c := range map[string]struct{ body, want string }{
		"notjson":  {"{", "the file was cut short"},
		"format":   {`{"format":"other","version":1,"devices":[{}]}`, `not a cxray snapshot: its format is "other"`},
		"version":  {`{"format":"cxray-snapshot","version":99,"devices":[{}]}`, "snapshot version 99 is newer than this cxray reads (1); update cxray"},
		"empty":    {`{"format":"cxray-snapshot","version":1,"devices":[]}`, "the snapshot has no devices"},
		"badvalue": {`{"format":"cxray-snapshot","version":1,"devices":[{"registers":[{"fields":[{"value":"x"}]}]}]}`, "neither a number nor s:text"},
		"interval": {`{"format":"cxray-snapshot","version":1,"interval":"soon","devices":[{}]}`, "soon"},
	} {
		if _, err := snapshot.Read(write(name, c.body)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if _, err := snapshot.Read(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	ok := write("ok", `{"format":"cxray-snapshot","version":1,"interval":"10s","devices":[{"device":"x"}]}`)
	f, err := snapshot.Read(ok)
	if err != nil || time.Duration(f.Interval) != 10*time.Second || f.Devices[0].Name != "x" {
		t.Errorf("%+v %v", f, err)
	}
}

func TestLoadProfileFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mine.yaml")
	os.WriteFile(p, []byte("registers:\n  - {register: MGIR}\n  - {register: PAOS, per: port}\n"), 0o644)
	pr, err := snapshot.LoadProfile(p)
	if err != nil || pr.Name != p || len(pr.Registers) != 2 || pr.Registers[1].Per != "port" {
		t.Errorf("%+v %v", pr, err)
	}
	if _, err := snapshot.LoadProfile("nosuch"); err == nil || !strings.Contains(err.Error(), "not one of full, minimal, standard") {
		t.Errorf("unknown profile: %v", err)
	}
	if d := cmp.Diff([]string{"full", "minimal", "standard"}, snapshot.Profiles()); d != "" {
		t.Errorf("profiles (-want +got):\n%s", d)
	}
}

// A deadline or a signal at any register access ends Take with the
// context's error: never a snapshot in which the registers read after it
// are recorded as failed (a baseline that would later diff as "vanished").
// Each access is tried both ways: cut short (the access fails with the
// context's error) and answered just before the end.
func TestTakeEndedAtEveryAccess(t *testing.T) {
	a, f, _ := second(t)
	p := profile(t, "minimal")
	o := snapshot.Options{Samples: 2}
	total := 0
	f.Hook = func(dev.Method, string) error { total++; return nil }
	// The second run counts: the adapter keeps what does not change (the
	// identity) from the first.
	for range 2 {
		total = 0
		if _, err := snapshot.Take(context.Background(), a, p, o); err != nil {
			t.Fatal(err)
		}
	}
	if total < 5 {
		t.Fatalf("an uninterrupted snapshot made only %d accesses", total)
	}
	for _, cut := range []bool{true, false} {
		for n := 1; n <= total; n++ {
			ctx, cancel := context.WithCancel(context.Background())
			k := 0
			f.Hook = func(dev.Method, string) error {
				if k++; k == n {
					cancel()
					if cut {
						return ctx.Err()
					}
				}
				return nil
			}
			d, err := snapshot.Take(ctx, a, p, o)
			cancel()
			if !errors.Is(err, context.Canceled) || d != nil {
				t.Errorf("ended at access %d of %d (cut short %v): %v, snapshot %v", n, total, cut, err, d != nil)
			}
		}
	}
	f.Hook = nil
}

// A device that stops answering mid-run (removed, its path lost) gives no
// snapshot: Take fails with an UnreadError naming the first read that did
// not reach it (issue 26.9: a baseline of a vanished device was written).
// A register the firmware answers with a status is recorded and the
// snapshot goes on (TestTakeExpandsOverOwnedPorts).
func TestTakeDeviceGoneMidRun(t *testing.T) {
	a, f, _ := second(t)
	// The device goes a few reads into the register loop: Ports is read
	// once and kept, and Take reads Identity again, so count what that
	// takes and let three more reads through.
	ctx := context.Background()
	if _, err := a.Ports(ctx); err != nil {
		t.Fatal(err)
	}
	calls, failAfter := 0, -1
	gone := errors.New("vsec: read: 0000:03:00.1: the device does not answer (all ones)")
	f.Hook = func(dev.Method, string) error {
		calls++
		if failAfter >= 0 && calls > failAfter {
			return gone
		}
		return nil
	}
	if _, err := a.Identity(ctx); err != nil {
		t.Fatal(err)
	}
	failAfter, calls = calls+3, 0
	d, err := snapshot.Take(context.Background(), a, profile(t, "standard"), snapshot.Options{})
	var ue *snapshot.UnreadError
	if d != nil || !errors.As(err, &ue) || !errors.Is(err, gone) || ue.Failed == 0 || ue.Failed > ue.Reads {
		t.Fatalf("Take after the device went: %v, %v", d, err)
	}
	if !strings.Contains(err.Error(), "no baseline was taken") {
		t.Errorf("message: %v", err)
	}
}

// A profile's index values are numbers (0x.. too) or enum names: both
// reach the device as the field's number, and the record keeps them as
// the profile wrote them.
func TestTakeProfileIndexSpellings(t *testing.T) {
	a, f, _ := second(t)
	f.Put("PDDR", "local_port=2", "page_select=3", "page_data.pddr_module_info_ext.cable_type=1")
	p, err := snapshot.ParseProfile([]byte("name: t\nregisters:\n"+
		"  - {register: PDDR, per: port, index: {page_select: Module_info_page}}\n"+
		"  - {register: MTMP, index: {sensor_index: \"0x41\"}}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	before := len(f.Calls())
	d, err := snapshot.Take(context.Background(), a, p, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, c := range f.Calls()[before:] {
		switch c.Register {
		case "PDDR":
			got["PDDR page_select"] = c.Index["page_select"] // the last PDDR read is the profile's
		case "MTMP":
			got["MTMP sensor_index"] = c.Index["sensor_index"]
		}
	}
	if diff := cmp.Diff(map[string]uint64{"PDDR page_select": 3, "MTMP sensor_index": 65}, got); diff != "" {
		t.Errorf("indexes sent (-want +got):\n%s", diff)
	}
	var keys []string
	for _, r := range d.Registers {
		keys = append(keys, r.Key)
		if r.Error != "" {
			t.Errorf("%s: %s", r.Key, r.Error)
		}
	}
	if diff := cmp.Diff([]string{"PDDR[page_select=Module_info_page,local_port=2]", "MTMP[sensor_index=0x41]"}, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if v := field(t, d, "PDDR[page_select=Module_info_page,local_port=2]", "page_data.pddr_module_info_ext.cable_type"); v.Value != snapshot.Num(1) {
		t.Errorf("the module page was not decoded: %+v", v)
	}
	if v := field(t, d, "MTMP[sensor_index=0x41]", "temperature"); v.Value != snapshot.Num(320) {
		t.Errorf("sensor 65 was not read: %+v", v)
	}
}
