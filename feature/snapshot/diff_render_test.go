package snapshot

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func oneReg(reg string, fields ...Field) *File {
	f := file("Rev 0.57", fields...)
	f.Devices[0].Registers[0].Register = reg
	f.Devices[0].Registers[0].Key = reg + "[sensor_index=0]"
	return f
}

// Diffs read as people read values: enums without arithmetic, the
// temperature in °C, and JSON with values, not display strings.
func TestDiffRendering(t *testing.T) {
	b := oneReg("MTMP",
		Field{Path: "temperature", Width: 16, Class: Dynamic, Value: Num(406), Text: "0x0196 (406)"},
		Field{Path: "mte", Width: 1, Class: Static, Value: Num(1), Text: "1"},
		Field{Path: "mode", Width: 2, Class: Static, Value: Num(1), Text: "up (1)"},
		Field{Path: "offset", Width: 16, Class: Dynamic, Value: Num(0xfff6), Text: "0xfff6 (-10)"},
		Field{Path: "sensor_name", Width: 64, Class: Static, Value: Str("ASIC"), Text: `"ASIC"`},
		Field{Path: "mac", Width: 48, Class: Static, Value: Num(0xb83fd2a1b2c0), Text: "b8:3f:d2:a1:b2:c0"},
	)
	n := oneReg("MTMP",
		Field{Path: "temperature", Width: 16, Class: Dynamic, Value: Num(416), Text: "0x01a0 (416)"},
		Field{Path: "mte", Width: 1, Class: Static, Value: Num(0), Text: "0"},
		Field{Path: "mode", Width: 2, Class: Static, Value: Num(2), Text: "down (2)"},
		Field{Path: "offset", Width: 16, Class: Dynamic, Value: Num(0xfff8), Text: "0xfff8 (-8)"},
		Field{Path: "sensor_name", Width: 64, Class: Static, Value: Str("QSFP"), Text: `"QSFP"`},
		Field{Path: "mac", Width: 48, Class: Static, Value: Num(0xb83fd2a1b2d0), Text: "b8:3f:d2:a1:b2:d0"},
	)
	r := Diff(b, n, nil)
	by := map[string]Change{}
	for _, c := range append(append([]Change{}, r.Static...), r.Dynamic...) {
		by[c.Path] = c
	}
	if c := by["temperature"]; c.OldText != "50.75 °C" || c.NewText != "52 °C" || c.Unit != "°C" || c.Delta == nil || *c.Delta != 1.25 {
		t.Errorf("temperature: %+v", c)
	}
	if c := by["mode"]; c.Delta != nil || c.OldText != "up (1)" || c.NewText != "down (2)" {
		t.Errorf("an enum change has no delta: %+v", c)
	}
	if c := by["offset"]; c.Delta == nil || *c.Delta != 2 {
		t.Errorf("signed: %+v", c)
	}
	if c := by["mte"]; c.Delta == nil || *c.Delta != -1 {
		t.Errorf("plain number: %+v", c)
	}
	var buf bytes.Buffer
	if err := r.WriteText(&buf, 0); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"temperature: 50.75 °C → 52 °C (+1.25 °C)", "mode: up (1) → down (2)\n", `sensor_name: "ASIC" → "QSFP"`} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Static []map[string]any `json:"static_changes"`
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]any{}
	for _, c := range back.Static {
		got[c["path"].(string)] = [2]any{c["old"], c["new"]}
	}
	want := map[string][2]any{"mte": {1.0, 0.0}, "mode": {1.0, 2.0}, "sensor_name": {"ASIC", "QSFP"}, "mac": {"b8:3f:d2:a1:b2:c0", "b8:3f:d2:a1:b2:d0"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON old/new are values (-want +got):\n%s", diff)
	}
}
