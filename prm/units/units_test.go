package units

import (
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
	if got := Text("PDDR", m+"rx_power_low_th", v, true); got != "0xfff6 (65526) = -10 dBm" {
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
