package units

import "testing"

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
