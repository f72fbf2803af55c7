package units

import (
	"strings"
	"testing"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

func TestLookupAndApply(t *testing.T) {
	u, ok := Lookup("mtmp", "temperature")
	if !ok {
		t.Fatal("MTMP.temperature has no unit")
	}
	if s := u.Apply(406, 16); s.Value != 50.75 || s.Unit != "°C" {
		t.Errorf("406 -> %v", s)
	}
	// Two's complement: 0xfff8 is -1 °C.
	if s := u.Apply(0xfff8, 16); s.Value != -1 {
		t.Errorf("0xfff8 -> %v", s)
	}
	u, ok = Lookup("PDDR", "page_data.pddr_module_info_ext.tx_bias_lane3")
	if !ok || u.Apply(3500, 16).Value != 7 {
		t.Errorf("tx bias: %v %v", u, ok)
	}
	if _, ok := Lookup("MTMP", "sensor_index"); ok {
		t.Error("sensor_index has no unit")
	}
}

func decoded(t *testing.T, reg string, as ...string) *prm.Decoded {
	t.Helper()
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		t.Fatal(err)
	}
	buf := p.NewBuffer()
	a, err := prm.ParseAssignments(as)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Encode(buf, a); err != nil {
		t.Fatal(err)
	}
	d, err := p.Decode(buf)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Values are rounded to the field's resolution, never to float noise.
func TestResolution(t *testing.T) {
	for _, c := range []struct {
		u    Unit
		raw  uint64
		want string
	}{
		{Unit{0.002, "mA", false}, 24743, "49.486 mA"},
		{Unit{0.125, "°C", true}, 406, "50.75 °C"},
		{Unit{0.125, "°C", true}, 0xfff9, "-0.875 °C"},
		{Unit{1.0 / 256, "°C", true}, 8782, "34.305 °C"},
		{Unit{0.1, "mV", false}, 33001, "3300.1 mV"},
		{Unit{0.1, "Gb/s", false}, 4000, "400 Gb/s"},
		{Unit{1, "dBm", true}, 0, "0 dBm"},
	} {
		if got := c.u.Apply(c.raw, 16).String(); got != c.want {
			t.Errorf("%v of %d: %q, want %q", c.u, c.raw, got, c.want)
		}
	}
	if d := (Unit{Scale: 1.0 / 256}).Decimals(); d != 3 {
		t.Errorf("1/256: %d decimals", d)
	}
}

// Text is reg get's value text; a signed field's raw part is signed, and
// PDDR's powers are dBm or µW by module_info_ext.
func TestText(t *testing.T) {
	const m = "page_data.pddr_module_info_ext."
	d := decoded(t, "PDDR", "page_select=Module_info_page", m+"rx_power_low_th=0xfff6", m+"rx_power_high_th=0xffff", m+"tx_bias_lane0=24743", m+"rx_power_lane0=3")
	for path, want := range map[string]string{
		m + "rx_power_low_th":  "0xfff6 (-10) = -10 dBm",
		m + "rx_power_high_th": "0xffff (-1) = -1 dBm",
		m + "tx_bias_lane0":    "0x60a7 (24743) = 49.486 mA",
		m + "rx_power_lane0":   "3 = 3 dBm",
	} {
		v, err := d.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Text("PDDR", path, v, false); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	v, _ := d.Get(m + "rx_power_low_th")
	// --raw is the number only: no conversion.
	if got := Text("PDDR", m+"rx_power_low_th", v, true); got != "0xfff6 (65526)" {
		t.Errorf("raw: %q", got)
	}
	d = decoded(t, "PDDR", "page_select=Module_info_page", "module_info_ext=uW", m+"rx_power_lane0=850")
	v, _ = d.Get(m + "rx_power_lane0")
	if got := Text("PDDR", m+"rx_power_lane0", v, false); got != "0x0352 (850) = 850 µW" {
		t.Errorf("µW: %q", got)
	}
	// rx_power_type is a 1-bit enum (OMA, Average_power), never a power:
	// the enum wins over the name's unit, in the text and in Fields.
	d = decoded(t, "PDDR", "page_select=Module_info_page", m+"rx_power_type=Average_power", m+"rx_power_lane0=3")
	v, _ = d.Get(m + "rx_power_type")
	if got := Text("PDDR", m+"rx_power_type", v, false); got != "Average_power (1)" {
		t.Errorf("rx_power_type: %q", got)
	}
	if s, ok := Fields("PDDR", d)[m+"rx_power_type"]; ok {
		t.Errorf("rx_power_type has a unit in Fields: %v", s)
	}
	if u, ok := Lookup("PDDR", m+"rx_power_type"); ok {
		t.Errorf("Lookup(rx_power_type) = %v", u)
	}
	// MTMP thresholds in °C, as reg set shows them before and after.
	d = decoded(t, "MTMP", "temperature_threshold_hi=840")
	v, _ = d.Get("temperature_threshold_hi")
	if got := Text("MTMP", "temperature_threshold_hi", v, false); got != "0x0348 (840) = 105 °C" {
		t.Errorf("threshold: %q", got)
	}
	f := Fields("MTMP", d)
	if f["temperature_threshold_hi"] != (Scaled{105, "°C"}) || len(f) != 4 {
		t.Errorf("Fields: %v", f)
	}
	// Fields without units are FormatValue.
	v, _ = d.Get("sensor_index")
	if got := Text("MTMP", "sensor_index", v, false); got != "0" {
		t.Errorf("sensor_index: %q", got)
	}
}

// PPCNT's physical-layer time since clear is in ms (shown in s, also when
// its halves are joined), and a BER coefficient is joined with its
// magnitude as 'cxray link' reads them; the firmware's 15E-255 is no
// errors. --raw shows none of it.
func TestPPCNTUnits(t *testing.T) {
	const st = "counter_set.phys_layer_stat_cntrs_ext."
	d := decoded(t, "PPCNT", "grp=0x16", st+"time_since_last_clear_low=2470", st+"raw_ber_coef=2", st+"raw_ber_magnitude=10",
		st+"effective_ber_coef=15", st+"effective_ber_magnitude=255")
	for path, want := range map[string]string{
		st + "time_since_last_clear": "0x00000000000009a6 (2470) = 2.47 s",
		st + "raw_ber_coef":          "2 = 2E-10 (with raw_ber_magnitude)",
		st + "effective_ber_coef":    "0xf (15) = no errors (15E-255, with effective_ber_magnitude)",
		st + "raw_ber_magnitude":     "0x0a (10)",
	} {
		v, err := d.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Text("PPCNT", path, v, false); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
		if got := Text("PPCNT", path, v, true); strings.Contains(got, "=") {
			t.Errorf("%s --raw: %q has a conversion", path, got)
		}
	}
	// Just cleared: no ratio at all.
	z := decoded(t, "PPCNT", "grp=0x16", st+"raw_ber_coef=15", st+"raw_ber_magnitude=255")
	if v, _ := z.Get(st + "raw_ber_coef"); !strings.Contains(Text("PPCNT", st+"raw_ber_coef", v, false), "= n/a: no time since the counters were cleared") {
		t.Errorf("just cleared: %q", Text("PPCNT", st+"raw_ber_coef", v, false))
	}
	if s, ok := Fields("PPCNT", z)[st+"raw_ber_coef"]; ok {
		t.Errorf("just cleared: Fields has %v", s)
	}
	f := Fields("PPCNT", d)
	if f[st+"raw_ber_coef"] != (Scaled{2e-10, "ratio"}) || f[st+"time_since_last_clear"] != (Scaled{2.47, "s"}) || f[st+"effective_ber_coef"] != (Scaled{0, "ratio"}) {
		t.Errorf("Fields: %v", f)
	}
}
