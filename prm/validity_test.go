package prm_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/prm"
)

// The PRM's phrasings of "valid only when", as its descriptions have them.
func TestDetectValidity(t *testing.T) {
	for descr, want := range map[string]*prm.Validity{
		"Module error details: ... Valid only when oper_status = 4'b0011.":  {Field: "oper_status", Value: 3},
		"Valid only when oper_status = 4'b0001.":                            {Field: "oper_status", Value: 1},
		"The RTT. Valid only when rtt_measure_valid is set":                 {Field: "rtt_measure_valid", NonZero: true},
		"Valid only if eth_proto_lp_valid is set.":                          {Field: "eth_proto_lp_valid", NonZero: true},
		"Valid only when UTCV is true in sec":                               {Field: "UTCV", NonZero: true},
		"Valid only when roce_tx_window_field_select ==  1":                 {Field: "roce_tx_window_field_select", Value: 1},
		"Valid only when all_vhca==0":                                       {Field: "all_vhca", Value: 0},
		"Valid only when wrapped_crypto_operational=1":                      {Field: "wrapped_crypto_operational", Value: 1},
		"Valid only when x = 8'h1f;":                                        {Field: "x", Value: 0x1f},
		"Valid only when the attenuation is overridden as indicated by ...": nil,
		"Valid only when not equal to 0":                                    nil,
		"Valid only when active or lc_ready are '1'":                        nil,
		"valid only when link state is UP":                                  nil,
		"valid only if eom_measurment bit '2' is set":                       nil,
		"Valid only when PDDR.module_info_ext":                              nil,
		"Temperature reading from the sensor.":                              nil,
	} {
		if d := cmp.Diff(want, prm.DetectValidity(descr)); d != "" {
			t.Errorf("%q (-want +got):\n%s", descr, d)
		}
	}
}

// Every database tells PMAOS's conditions: the ADBs from their
// descriptions, the built-in one from the facts our generator derived.
func TestValidityFromTheDatabase(t *testing.T) {
	// Older revisions name no oper_status values: the number then.
	want := map[string][]string{
		"error_type":               {"oper_status == module_plugged_with_error (3)", "oper_status == 3"},
		"operational_notification": {"oper_status == plugged_enabled (1)", "oper_status == 1"},
		"oper_status":              {""},
	}
	for _, db := range databases(t) {
		r, err := db.Register("PMAOS")
		if err != nil {
			t.Fatal(err)
		}
		p, err := db.RegisterPlan(r)
		if err != nil {
			t.Fatal(err)
		}
		for path, w := range want {
			tg, err := p.Resolve(path, p.NewBuffer())
			if err != nil {
				continue // not in this revision
			}
			if db.FieldDescr(tg.Step.Field) == "" && db.HasDescriptions {
				continue
			}
			if got := tg.Step.ValidWhen; !slices.Contains(w, got) {
				t.Errorf("%s (%s) PMAOS %s: valid when %q, want one of %q", db.Revision, db.Source, path, got, w)
			}
		}
	}
}

// A field whose condition does not hold is not valid: the table shows its
// number with why (never the enum name), JSON the bare number, NotValid
// lists it; with the condition met it reads as usual.
func TestNotValidField(t *testing.T) {
	healthy := decodeWith(t, "PMAOS", "module=1", "oper_status=plugged_enabled", "error_type=0")
	if txt := rowText(t, healthy)["error_type"]; txt != "0 (not valid: oper_status is plugged_enabled (1); valid only when oper_status == module_plugged_with_error (3))" {
		t.Errorf("table text %q", txt)
	}
	if v := jsonOf(t, healthy, false)["error_type"]; v != float64(0) {
		t.Errorf("JSON error_type %v, want the number 0", v)
	}
	if d := cmp.Diff(map[string]string{"error_type": "oper_status is plugged_enabled (1); valid only when oper_status == module_plugged_with_error (3)"}, healthy.NotValid()); d != "" {
		t.Errorf("NotValid (-want +got):\n%s", d)
	}
	if v, _ := healthy.Get("error_type"); prm.FormatRaw(v) != prm.FormatValue(v) {
		t.Errorf("raw %q", prm.FormatRaw(v))
	}
	broken := decodeWith(t, "PMAOS", "module=1", "oper_status=module_plugged_with_error", "error_type=Bus_stuck")
	if txt := rowText(t, broken)["error_type"]; txt != "Bus_stuck (2)" {
		t.Errorf("a module with an error: %q", txt)
	}
	if v := jsonOf(t, broken, false)["error_type"]; v != "Bus_stuck" || len(broken.NotValid()) != 1 || !strings.Contains(broken.NotValid()["operational_notification"], "plugged_enabled") {
		t.Errorf("a module with an error: JSON %v, not valid %v", v, broken.NotValid())
	}
}

// Validity survives the facts format, and a condition naming no sibling
// is dropped when the database is put together.
func TestValidityString(t *testing.T) {
	for _, v := range []prm.Validity{{Field: "oper_status", Value: 3}, {Field: "x_valid", NonZero: true}} {
		got, err := prm.ParseValidity(v.String())
		if err != nil || *got != v {
			t.Errorf("%v -> %q -> %v, %v", v, v.String(), got, err)
		}
	}
	for _, bad := range []string{"", "x", "=3", "x=y", "!=0"} {
		if _, err := prm.ParseValidity(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	n := &prm.Node{Name: "n", Size: 32, Fields: []*prm.Field{
		{Name: "a", Offset: 28, Size: 4, ValidWhen: &prm.Validity{Field: "B", Value: 1}},
		{Name: "b", Offset: 24, Size: 4},
		{Name: "c", Offset: 20, Size: 4, ValidWhen: &prm.Validity{Field: "nosuch", NonZero: true}},
	}}
	if _, err := prm.NewDB("t", "Rev 0", map[string]*prm.Node{"n": n}, nil); err != nil {
		t.Fatal(err)
	}
	if n.Fields[0].ValidWhen == nil || n.Fields[0].ValidWhen.Field != "b" || n.Fields[2].ValidWhen != nil {
		t.Errorf("after NewDB: a %+v, c %+v", n.Fields[0].ValidWhen, n.Fields[2].ValidWhen)
	}
}

// FuzzDetectValidity: whatever a description says, a condition found
// names a field written in it, reads back through the facts format, and
// nothing panics.
func FuzzDetectValidity(f *testing.F) {
	for _, s := range []string{"Valid only when oper_status = 4'b0011", "valid only if x is set", "Valid only when a==0x10", "Valid only when b = 99999999999999999999999", "valid only when c = 4'b", "Valid only when d = 12'hzz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, descr string) {
		v := prm.DetectValidity(descr)
		if v == nil {
			return
		}
		if v.Field == "" || !strings.Contains(strings.ToLower(descr), strings.ToLower(v.Field)) {
			t.Fatalf("%q: condition on %q", descr, v.Field)
		}
		back, err := prm.ParseValidity(v.String())
		if err != nil || *back != *v {
			t.Fatalf("%q: %+v does not read back (%v, %v)", descr, v, back, err)
		}
	})
}
