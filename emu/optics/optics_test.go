package optics_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	emuoptics "github.com/cxray/cxray/emu/optics"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
)

var t0 = time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)

// rig is one emulated ConnectX-7 with a chosen module in cage 0 (and the
// profile's in cage 1), on a manual clock, its firmware strict about fields.
type rig struct {
	t   *testing.T
	clk *clock.Manual
	a   *scenario.Adapter
	f   *fw.Firmware
	db  *prm.DB
}

func newRig(t *testing.T, cage0 string) *rig {
	t.Helper()
	sc, err := scenario.Parse([]byte(cage0Scenario(cage0)), "test")
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(t0)
	e, err := scenario.Build(sc, scenario.Options{Clock: clk, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	a := e.Adapters[0]
	return &rig{t: t, clk: clk, a: a, f: a.Firmware, db: a.Firmware.DB()}
}

func cage0Scenario(body string) string {
	return "devices:\n  - profile: cx7-2p400g\n    modules:\n      - module: 0\n" + body
}

// access runs one register request through the firmware, built by name.
func (r *rig) access(reg string, kv ...string) (*prm.Decoded, uint8) {
	r.t.Helper()
	rg, err := r.db.Register(reg)
	if err != nil {
		r.t.Fatal(err)
	}
	p, _ := r.db.RegisterPlan(rg)
	buf := p.NewBuffer()
	var as []prm.Assignment
	for i := 0; i+1 < len(kv); i += 2 {
		as = append(as, prm.Assignment{Path: kv[i], Value: kv[i+1]})
	}
	if err := p.Encode(buf, as); err != nil {
		r.t.Fatal(err)
	}
	out, st := r.f.AccessRegister(uint16(rg.ID), emu.MethodGet, buf)
	if st != 0 {
		return nil, st
	}
	d, err := p.Decode(out)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.f.LastError(); err != nil {
		r.t.Fatalf("firmware bug: %v", err)
	}
	return d, st
}

func field(d *prm.Decoded, path string) uint64 {
	v, err := d.Get(path)
	if err != nil {
		panic(err)
	}
	return v.Uint()
}

// ReadPage makes the rig an optics.PageReader over MCIA of cage 0.
func (r *rig) ReadPage(_ context.Context, a optics.PageAddr, n int) ([]byte, error) {
	d, st := r.access("MCIA", "module", "0", "i2c_device_address", fmt.Sprint(a.I2C), "page_number", fmt.Sprint(a.Page),
		"bank_number", fmt.Sprint(a.Bank), "device_address", fmt.Sprint(a.Offset), "size", fmt.Sprint(n))
	if st != 0 {
		return nil, fmt.Errorf("MCIA access status %d", st)
	}
	if s := field(d, "status"); s != 0 {
		return nil, fmt.Errorf("MCIA module status 0x%x", s)
	}
	dw, _ := d.Get("dword")
	var out []byte
	for i := 0; i < dw.Len() && len(out) < n; i++ {
		w := dw.Kid(i).Uint()
		out = append(out, byte(w>>24), byte(w>>16), byte(w>>8), byte(w))
	}
	return out[:n], nil
}

func (r *rig) eeprom() (*optics.Module, error) {
	im, err := optics.ReadImage(context.Background(), r)
	if err != nil {
		return nil, err
	}
	return optics.Decode(im)
}

func (r *rig) pddr(uw bool, lanes int) *optics.Module {
	r.t.Helper()
	ext := "0"
	if uw {
		ext = "1"
	}
	d, st := r.access("PDDR", "local_port", "1", "page_select", "Module_info_page", "module_info_ext", ext)
	if st != 0 {
		r.t.Fatalf("PDDR status %d", st)
	}
	m, err := optics.FromPDDR(d, lanes)
	if err != nil {
		r.t.Fatal(err)
	}
	return m
}

func (r *rig) pmaos() (string, string) {
	d, _ := r.access("PMAOS", "module", "0")
	o, _ := d.Get("oper_status")
	e, _ := d.Get("error_type")
	on, _ := o.EnumName()
	en, _ := e.EnumName()
	if on != "module_plugged_with_error" {
		en = ""
	}
	return on, en
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.9g, the model says %.9g", what, got, want)
	}
}

// Every catalog module: the EEPROM decodes to exactly the model's values,
// and the firmware's view (in µW and in dBm) agrees with the EEPROM within
// resolution.
func TestCatalogConsistency(t *testing.T) {
	for _, kind := range emuoptics.Kinds() {
		if kind == emuoptics.Empty {
			continue
		}
		t.Run(kind, func(t *testing.T) {
			r := newRig(t, "        type: "+kind+"\n")
			r.clk.Advance(7*time.Minute + 13*time.Second)
			want, err := r.a.Optics.Snapshot(0)
			if err != nil {
				t.Fatal(err)
			}
			m, err := r.eeprom()
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !m.ChecksumsOK() || m.Vendor.Name != want.Vendor || m.Vendor.PN != want.PartNumber || m.Vendor.SN != want.Serial || m.Identifier.Value != want.Identifier {
				t.Errorf("identity %+v %+v, model %+v", m.Vendor, m.Checksums, want)
			}
			if m.DDM != want.DDM || len(m.Notes) != 0 && !m.FlatMemory {
				t.Errorf("ddm %v notes %v", m.DDM, m.Notes)
			}
			if want.DDM {
				near(t, "temperature", m.Temperature.C, want.TempC)
				near(t, "voltage", m.Voltage.V, want.VoltageV)
				if len(m.Lanes) != len(want.Lanes) {
					t.Fatalf("%d lanes, model %d", len(m.Lanes), len(want.Lanes))
				}
				for i, l := range m.Lanes {
					near(t, fmt.Sprintf("lane %d bias", i+1), l.TxBias.MA, want.Lanes[i].BiasMA)
					near(t, fmt.Sprintf("lane %d tx", i+1), l.TxPower.MW, want.Lanes[i].TxMW)
					near(t, fmt.Sprintf("lane %d rx", i+1), l.RxPower.MW, want.Lanes[i].RxMW)
				}
				if len(optics.Marks(m)) != 0 {
					t.Errorf("a healthy module sits inside its thresholds: %v", optics.Marks(m))
				}
			}
			for _, uw := range []bool{true, false} {
				fwm := r.pddr(uw, len(m.Lanes))
				for _, c := range optics.Compare(m, fwm) {
					if !c.OK {
						t.Errorf("µW=%v: %+v", uw, c)
					}
				}
			}
		})
	}
}

func TestDriftAndLanes(t *testing.T) {
	r := newRig(t, "        type: qsfp112-400g-dr4\n")
	a, _ := r.a.Optics.Snapshot(0)
	r.clk.Advance(500 * time.Millisecond)
	b, _ := r.a.Optics.Snapshot(0)
	m1, _ := r.eeprom()
	r.clk.Advance(500 * time.Millisecond)
	m2, _ := r.eeprom()
	if changed, total := optics.Changed(m1, m2); changed < total/2 || total != 14 {
		t.Errorf("half a second later only %d of %d monitors moved", changed, total)
	}
	if a.Lanes[0] == b.Lanes[0] {
		t.Error("lane 1 did not drift")
	}
	if a.Lanes[0].RxMW == a.Lanes[1].RxMW || a.Lanes[0].BiasMA == a.Lanes[2].BiasMA {
		t.Error("lanes are all alike")
	}
	// MTMP's module sensor and the module's DDM temperature are one.
	d, _ := r.access("MTMP", "sensor_index", "64")
	mtmp := float64(int16(field(d, "temperature"))) * 0.125
	if math.Abs(mtmp-m2.Temperature.C) > 0.0625+1.0/256 {
		t.Errorf("MTMP %v °C, DDM %v °C", mtmp, m2.Temperature.C)
	}
	// The same scenario gives the same readings.
	r2 := newRig(t, "        type: qsfp112-400g-dr4\n")
	r2.clk.Advance(time.Second)
	m3, _ := r2.eeprom()
	if optics.Monitors(m3)["lane 3 rx power"] != optics.Monitors(m2)["lane 3 rx power"] {
		t.Error("not deterministic")
	}
}

func TestFaults(t *testing.T) {
	type check func(t *testing.T, r *rig)
	cases := map[string]check{
		"i2c_hang": func(t *testing.T, r *rig) {
			if _, e := r.pmaos(); e != "Bus_stuck" {
				t.Errorf("PMAOS error %q", e)
			}
			_, err := r.eeprom()
			if de, ok := err.(*optics.DecodeError); !ok || de.Kind != optics.KindAllOnes {
				t.Errorf("decode %v", err)
			}
			if fwm := r.pddr(true, 4); fwm.Temperature.Raw != -1 || fwm.Lanes[0].RxPower.Raw != 0xFFFF {
				t.Errorf("firmware monitors %+v", fwm.Temperature)
			}
		},
		"no_ddm": func(t *testing.T, r *rig) {
			m, _ := r.eeprom()
			if m.DDM || m.Temperature != nil || r.pddr(true, 4).DDM {
				t.Errorf("still has DDM")
			}
		},
		"frozen_monitors": func(t *testing.T, r *rig) {
			m1, fw1 := mustEEPROM(t, r), r.pddr(true, 4)
			r.clk.Advance(3 * time.Second)
			m2, fw2 := mustEEPROM(t, r), r.pddr(true, 4)
			if c, _ := optics.Changed(m1, m2); c != 0 {
				t.Errorf("%d EEPROM monitors moved", c)
			}
			if c, _ := optics.Changed(fw1, fw2); c != 0 {
				t.Errorf("%d firmware monitors moved", c)
			}
		},
		"stale_firmware_view": func(t *testing.T, r *rig) {
			m1, fw1 := mustEEPROM(t, r), r.pddr(true, 4)
			r.clk.Advance(3 * time.Second)
			m2, fw2 := mustEEPROM(t, r), r.pddr(true, 4)
			if c, _ := optics.Changed(m1, m2); c == 0 {
				t.Error("the EEPROM froze too")
			}
			if c, _ := optics.Changed(fw1, fw2); c != 0 {
				t.Errorf("%d firmware monitors moved", c)
			}
		},
		"unsupported_identifier": func(t *testing.T, r *rig) {
			_, err := r.eeprom()
			if de, ok := err.(*optics.DecodeError); !ok || de.Kind != optics.KindUnsupported {
				t.Errorf("decode %v", err)
			}
			if _, e := r.pmaos(); e != "unsupported_cable" {
				t.Errorf("PMAOS %q", e)
			}
		},
		"checksum_error": func(t *testing.T, r *rig) {
			if m := mustEEPROM(t, r); m.ChecksumsOK() {
				t.Error("checksums match")
			}
		},
		"firmware_unaware": func(t *testing.T, r *rig) {
			if m := mustEEPROM(t, r); !m.ChecksumsOK() || m.Standard != optics.CMIS {
				t.Errorf("the EEPROM is fine: %+v", m)
			}
			if fwm := r.pddr(true, 4); fwm.CableType != optics.CableUnidentified {
				t.Errorf("cable type %q", fwm.CableType)
			}
		},
		"low_rx_power": func(t *testing.T, r *rig) {
			m := mustEEPROM(t, r)
			if !*m.Lanes[0].RxLOS || *m.Lanes[1].RxLOS || !m.Lanes[0].Flags.RxPower.LowAlarm {
				t.Errorf("lane 1 %+v %+v", *m.Lanes[0].RxLOS, m.Lanes[0].Flags.RxPower)
			}
		},
	}
	for _, name := range emuoptics.FaultNames() {
		c, ok := cases[name]
		if !ok {
			t.Errorf("fault %s has no test", name)
			continue
		}
		t.Run(name, func(t *testing.T) { c(t, newRig(t, "        faults: ["+name+"]\n")) })
	}
}

func mustEEPROM(t *testing.T, r *rig) *optics.Module {
	t.Helper()
	m, err := r.eeprom()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Faults and modules switch at run time; PMAOS follows.
func TestRunTime(t *testing.T) {
	r := newRig(t, "        type: qsfp28-100g-sr4\n")
	if o, e := r.pmaos(); o != "plugged_enabled" || e != "" {
		t.Fatalf("%s %s", o, e)
	}
	if err := r.a.Optics.SetFaults(0, emuoptics.Faults{I2CHang: true}); err != nil {
		t.Fatal(err)
	}
	if _, e := r.pmaos(); e != "Bus_stuck" {
		t.Errorf("hang: %q", e)
	}
	if err := r.a.Optics.SetFaults(0, emuoptics.Faults{}); err != nil {
		t.Fatal(err)
	}
	if o, e := r.pmaos(); o != "plugged_enabled" || e != "" {
		t.Errorf("cleared: %s %s", o, e)
	}
	if err := r.a.Optics.Plug(0, emuoptics.Empty); err != nil {
		t.Fatal(err)
	}
	if o, _ := r.pmaos(); o != "unplugged" {
		t.Errorf("unplugged: %s", o)
	}
	if _, err := r.eeprom(); err == nil || !strings.Contains(err.Error(), "0x3") {
		t.Errorf("MCIA of an empty cage: %v", err)
	}
	if r.pddr(true, 4).CableType != optics.CableUnplugged {
		t.Error("PDDR of an empty cage")
	}
	if err := r.a.Optics.Plug(0, "sfp28-25g-lr"); err != nil {
		t.Fatal(err)
	}
	if m := mustEEPROM(t, r); m.Standard != optics.SFF8472 || m.Calibration != "external" {
		t.Errorf("plugged SFP: %+v", m)
	}
	if err := r.a.Optics.Plug(0, "nonsense"); err == nil {
		t.Error("unknown kind accepted")
	}
	// A module error the scenario set stays when optics faults clear.
	r = newRig(t, "        error: High_Temperature\n")
	if err := r.a.Optics.SetFaults(0, emuoptics.Faults{FirmwareUnaware: true}); err != nil {
		t.Fatal(err)
	}
	if err := r.a.Optics.SetFaults(0, emuoptics.Faults{}); err != nil {
		t.Fatal(err)
	}
	if _, e := r.pmaos(); e != "High_Temperature" {
		t.Errorf("scenario error lost: %q", e)
	}
}

// MCIA refuses what a module would: bad sizes, pages it lacks, writes.
func TestMCIARequests(t *testing.T) {
	r := newRig(t, "        type: qsfp28-100g-dac\n")
	if _, st := r.access("MCIA", "module", "0", "i2c_device_address", "80", "size", "129"); st != fw.StatusBadParam {
		t.Errorf("size 129: status %d", st)
	}
	if _, st := r.access("MCIA", "module", "0", "i2c_device_address", "80", "device_address", "200", "size", "100"); st != fw.StatusBadParam {
		t.Errorf("past 256: status %d", st)
	}
	d, _ := r.access("MCIA", "module", "0", "i2c_device_address", "80", "page_number", "3", "device_address", "128", "size", "16")
	if field(d, "status") != 0x11 {
		t.Errorf("page 03h of a flat module: status %#x", field(d, "status"))
	}
	d, _ = r.access("MCIA", "module", "0", "i2c_device_address", "80", "page_number", "3", "device_address", "0", "size", "4")
	if field(d, "status") != 0 || field(d, "dword[0]")>>24 != 0x11 {
		t.Errorf("the lower half answers whatever the page: %#x", field(d, "dword[0]"))
	}
	d, _ = r.access("MCIA", "module", "0", "i2c_device_address", "81", "size", "4")
	if field(d, "status") != 0x1 {
		t.Errorf("A2h of a QSFP: %#x", field(d, "status"))
	}
	if _, st := r.access("MCIA", "module", "9", "i2c_device_address", "80", "size", "4"); st != fw.StatusBadParam {
		t.Errorf("module 9: %d", st)
	}
}

func TestScenarioKeys(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"        type: nonsense\n", "unknown module type"},
		{"        faults: [nonsense]\n", "unknown module fault"},
		{"        type: qsfp28-100g-sr4\n        media: copper\n", "contradicts"},
		{"        plugged: false\n        faults: [no_ddm]\n", "empty cage"},
		{"        plugged: false\n        type: qsfp28-100g-sr4\n", "plugged: false"},
	} {
		_, err := scenario.Parse([]byte(cage0Scenario(c.body)), "test")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.body, err, c.want)
		}
	}
	// type sets media and protocols; media alone picks that media's default.
	sc, err := scenario.Parse([]byte(cage0Scenario("        type: sfp28-25g-lr\n")), "test")
	if err != nil {
		t.Fatal(err)
	}
	d := sc.Devices[0]
	if d.Optics[0].Kind != "sfp28-25g-lr" || d.Spec.Modules[0].Media != "optical" || d.Spec.Modules[0].Protocols[0] != "25GAUI-1" || d.Optics[1].Kind != "qsfp112-400g-sr4" {
		t.Errorf("%+v %+v", d.Optics, d.Spec.Modules[0])
	}
	sc, _ = scenario.Parse([]byte(cage0Scenario("        media: copper\n")), "test")
	if sc.Devices[0].Optics[0].Kind != emuoptics.DefaultKind("copper") {
		t.Errorf("media copper: %+v", sc.Devices[0].Optics)
	}
	sc, _ = scenario.Parse([]byte(cage0Scenario("        type: empty\n")), "test")
	if !sc.Devices[0].Spec.Modules[0].Absent {
		t.Error("type empty leaves the cage empty")
	}
}

// Readers, run-time changes and snapshots at once (run with -race).
func TestConcurrentUse(t *testing.T) {
	r := newRig(t, "        type: qsfp28-100g-sr4\n")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 50; i++ {
			_ = r.a.Optics.SetFaults(0, emuoptics.Faults{FrozenMonitors: i%2 == 0, I2CHang: i%5 == 0})
			_, _ = r.a.Optics.Snapshot(0)
			if i%10 == 0 {
				_ = r.a.Optics.Plug(0, "sfp28-25g-lr")
			}
		}
	}()
	for i := 0; i < 50; i++ {
		_, _ = optics.ReadImage(context.Background(), r)
		r.clk.Advance(time.Second)
	}
	<-done
}

// countingReader counts the bytes and reads a ReadImage asks for.
type countingReader struct {
	r            optics.PageReader
	reads, bytes int
}

func (c *countingReader) ReadPage(ctx context.Context, a optics.PageAddr, n int) ([]byte, error) {
	c.reads++
	c.bytes += n
	return c.r.ReadPage(ctx, a, n)
}

// ReadImage reads each page only as far as the decoders look; for every
// module of the catalogue, with every fault, that decodes exactly as the
// whole pages do, and asks for fewer bytes.
func TestTrimmedReadsDecodeTheSame(t *testing.T) {
	for _, kind := range emuoptics.Kinds() {
		if kind == emuoptics.Empty {
			continue
		}
		for _, fault := range append([]string{""}, emuoptics.FaultNames()...) {
			t.Run(kind+"/"+fault, func(t *testing.T) {
				body := "        type: " + kind + "\n"
				if fault != "" {
					body += "        faults: [" + fault + "]\n"
				}
				r := newRig(t, body)
				full := &countingReader{r: r}
				imFull, errFull := optics.ReadFullImage(context.Background(), full)
				trim := &countingReader{r: r}
				imTrim, errTrim := optics.ReadImage(context.Background(), trim)
				if (errFull == nil) != (errTrim == nil) {
					t.Fatalf("full read: %v, trimmed read: %v", errFull, errTrim)
				}
				if errFull != nil {
					return
				}
				mFull, dFull := optics.Decode(imFull)
				mTrim, dTrim := optics.Decode(imTrim)
				if fmt.Sprint(dFull) != fmt.Sprint(dTrim) {
					t.Fatalf("decode errors differ: %v / %v", dFull, dTrim)
				}
				if diff := cmp.Diff(mFull, mTrim, cmpopts.EquateNaNs()); diff != "" {
					t.Errorf("trimmed pages decode differently (-full +trimmed):\n%s", diff)
				}
				if trim.reads != full.reads || trim.bytes > full.bytes {
					t.Errorf("trimmed: %d reads, %d bytes; full: %d reads, %d bytes", trim.reads, trim.bytes, full.reads, full.bytes)
				}
			})
		}
	}
}

// Static pages are reused between reads of one module, and not once
// another module is plugged in the cage.
func TestStaticPagesReused(t *testing.T) {
	r := newRig(t, "        type: qsfp112-400g-dr4\n")
	var cache optics.StaticPages
	first := &countingReader{r: r}
	if _, err := optics.ReadImageCached(context.Background(), first, &cache); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(5 * time.Second)
	second := &countingReader{r: r}
	im2, err := optics.ReadImageCached(context.Background(), second, &cache)
	if err != nil {
		t.Fatal(err)
	}
	if second.reads != first.reads-2 {
		t.Errorf("second read made %d page reads, first %d: pages 01h and 02h were not reused", second.reads, first.reads)
	}
	fresh, _ := optics.ReadImage(context.Background(), r)
	m2, _ := optics.Decode(im2)
	mf, _ := optics.Decode(fresh)
	if diff := cmp.Diff(mf, m2, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("a read with reused pages decodes differently (-fresh +cached):\n%s", diff)
	}
	// Another module (another serial number) in the cage: nothing reused.
	if err := r.a.Optics.Plug(0, "osfp-400g-dr4"); err != nil {
		t.Fatal(err)
	}
	third := &countingReader{r: r}
	im3, err := optics.ReadImageCached(context.Background(), third, &cache)
	if err != nil {
		t.Fatal(err)
	}
	if third.reads != first.reads {
		t.Errorf("after a swap: %d page reads, want all %d (nothing reused)", third.reads, first.reads)
	}
	m3, _ := optics.Decode(im3)
	fresh3, _ := optics.ReadImage(context.Background(), r)
	mf3, _ := optics.Decode(fresh3)
	if diff := cmp.Diff(mf3, m3, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("after a module swap the cached read decodes differently (-fresh +cached):\n%s", diff)
	}
}

// In a port that runs InfiniBand the firmware's module page names the IB
// widths the module's lanes carry; in an Ethernet port it names none.
func TestIBWidthOfModule(t *testing.T) {
	r := newRig(t, "        type: osfp-400g-sr4\n    nv: {configured: {LINK_TYPE_P1: IB}}\n")
	for port, want := range map[string]uint64{"1": 7, "2": 0} {
		d, st := r.access("PDDR", "local_port", port, "page_select", "3")
		if st != fw.StatusOK {
			t.Fatalf("port %s: status %d", port, st)
		}
		v, err := d.Get(pddrPrefixTest + "ib_width")
		if err != nil || v.Uint() != want {
			t.Errorf("port %s ib_width %v (%v), want %d (1x, 2x, 4x on an IB port; none on Ethernet)", port, v.Uint(), err, want)
		}
	}
}

const pddrPrefixTest = "page_data.pddr_module_info_ext."

// A module's temperature sensor (MTMP 64+N) is its own monitor, read by
// the firmware: it stands where the firmware's view of the module stands
// (frozen monitors, a stale view) and agrees with PDDR's temperature; a
// healthy module's sensor moves with the clock.
func TestModuleSensorFollowsTheModule(t *testing.T) {
	for _, fault := range []string{"frozen_monitors", "stale_firmware_view", ""} {
		body := ""
		if fault != "" {
			body = "        faults: [" + fault + "]\n"
		}
		r := newRig(t, body)
		r.clk.Advance(time.Minute)
		if err := r.a.Optics.SetFaults(0, faultsOf(t, fault)); err != nil {
			t.Fatal(err)
		}
		temps := func() (mtmp, pddr uint64) {
			d, st := r.access("MTMP", "sensor_index", "64")
			if st != 0 {
				t.Fatalf("MTMP 64: status %d", st)
			}
			p, st := r.access("PDDR", "local_port", "1", "page_select", "3")
			if st != 0 {
				t.Fatalf("PDDR page 3: status %d", st)
			}
			return field(d, "temperature"), field(p, "page_data.pddr_module_info_ext.temperature")
		}
		m1, p1 := temps()
		r.clk.Advance(30 * time.Minute)
		m2, p2 := temps()
		if moved := m1 != m2; moved != (fault == "") {
			t.Errorf("fault %q: MTMP 64 read %d then %d half an hour later", fault, m1, m2)
		}
		// MTMP counts 1/8 °C, PDDR 1/256 °C: the same reading.
		if d := int64(m2*32) - int64(p2); d < -32 || d > 32 {
			t.Errorf("fault %q: MTMP 64 %.3f °C, PDDR %.3f °C", fault, float64(m2)/8, float64(p2)/256)
		}
		_ = p1
	}
}

func faultsOf(t *testing.T, name string) emuoptics.Faults {
	if name == "" {
		return emuoptics.Faults{}
	}
	f, err := emuoptics.ParseFaults([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	return f
}
