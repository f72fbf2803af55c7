package adapter_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/prm"
)

// A port's index is shared by the reads that extend it: extending it twice
// must give two indexes, not one overwritten by the other.
func TestIndexExtendsWithoutAliasing(t *testing.T) {
	lp := adapter.LocalPort(3)
	op, troub := lp.Page(0), lp.Page(1).With("page_data.pddr_troubleshooting_page_ext.group_opcode", 0)
	ph := lp.Group(0x12)
	if diff := cmp.Diff("local_port=3", lp.String()); diff != "" {
		t.Errorf("port index (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("local_port=3,page_select=0", op.String()); diff != "" {
		t.Errorf("operational page (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("local_port=3,page_select=1,page_data.pddr_troubleshooting_page_ext.group_opcode=0", troub.String()); diff != "" {
		t.Errorf("troubleshooting page (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("local_port=3,grp=18", ph.String()); diff != "" {
		t.Errorf("counter group (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("local_port=3,grp=18,test_mode=0", ph.Join(adapter.At("test_mode", 0)).String()); diff != "" {
		t.Errorf("joined (-want +got):\n%s", diff)
	}
}

func TestIndexLookupAndAssignments(t *testing.T) {
	x := adapter.Index{}.Named("info_type", "MODEL_NAME").With("read_offset", 64)
	if v, ok := x.Lookup("read_offset"); !ok || v != 64 {
		t.Errorf("Lookup(read_offset) = %d, %v; want 64, true", v, ok)
	}
	// A field given by name has no number to look up, but is given.
	if _, ok := x.Lookup("info_type"); ok || !x.Has("info_type") {
		t.Errorf("info_type: Lookup ok=%v Has=%v; want false, true", ok, x.Has("info_type"))
	}
	if x.Has("local_port") {
		t.Error("Has(local_port) on an index without it")
	}
	want := []prm.Assignment{{Path: "info_type", Value: "MODEL_NAME"}, {Path: "read_offset", Value: "64"}}
	if diff := cmp.Diff(want, x.Assignments()); diff != "" {
		t.Errorf("Assignments (-want +got):\n%s", diff)
	}
	if got := adapter.Index(nil).Assignments(); len(got) != 0 {
		t.Errorf("nil index gives %v", got)
	}
}
