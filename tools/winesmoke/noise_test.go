package winesmoke

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Wine's own lines are taken out of a program's standard error, and
// nothing else is (issue 26.12: a loaded CI run failed on "wine client
// error:64: write: Bad file descriptor").
func TestStripWineNoise(t *testing.T) {
	in := "wine: created the configuration directory '/tmp/w'\n" +
		"cxray: device emu: needs Linux\n" +
		"wine client error:64: write: Bad file descriptor\n" +
		"0024:fixme:ntdll:NtQuerySystemInformation info_class SYSTEM_PERFORMANCE_INFORMATION\n" +
		"0130:err:module:import_dll Library foo.dll not found\n" +
		"a line that mentions wine: in the middle\n" +
		"wine client error:64: write: Bad file descriptor"
	kept, notes := stripWineNoise(in)
	if want := "cxray: device emu: needs Linux\na line that mentions wine: in the middle\n"; kept != want {
		t.Errorf("kept %q, want %q", kept, want)
	}
	want := []string{"wine: created the configuration directory '/tmp/w'", "wine client error:64: write: Bad file descriptor",
		"0024:fixme:ntdll:NtQuerySystemInformation info_class SYSTEM_PERFORMANCE_INFORMATION", "0130:err:module:import_dll Library foo.dll not found",
		"wine client error:64: write: Bad file descriptor"}
	if d := cmp.Diff(want, notes); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
}
