package optics

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/prm"
)

// A read that failed because of the register database is a database
// verdict, never a hardware one.
func TestDatabaseVerdict(t *testing.T) {
	fe := &prm.FieldError{Path: "i2c_device_address", Msg: "is RW, not INDEX"}
	vs := Diagnose(Observation{Module: 0, OperStatus: "plugged_enabled", EEPROMErr: fe, Database: "Rev 0.51"})
	var codes, cats []string
	for _, v := range vs {
		codes, cats = append(codes, v.Code), append(cats, v.Category)
	}
	if d := cmp.Diff([]string{VerdictDatabase}, codes); d != "" {
		t.Errorf("codes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{Database}, cats); d != "" {
		t.Errorf("categories (-want +got):\n%s", d)
	}
	// A device error stays a hardware verdict.
	vs = Diagnose(Observation{Module: 0, OperStatus: "plugged_enabled", EEPROMErr: errors.New("MCIA: module status 0x1")})
	if len(vs) != 1 || vs[0].Code != VerdictModuleNotReadable || vs[0].Category != Hardware {
		t.Errorf("device error: %+v", vs)
	}
}
