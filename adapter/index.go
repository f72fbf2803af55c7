package adapter

import (
	"strconv"
	"strings"

	"github.com/cxray/cxray/prm"
)

// Index picks one instance of a register: values for its INDEX fields
// (local_port, page_select, grp, module, ...), by their paths in the
// built-in database, in the order given. Fields not given are filled in
// by dev (dev.DefaultIndex: 0, or the function's own local port). The
// text form "local_port=1" belongs to the command line (`reg get
// --index`), which parses it once; the adapter and the features pass
// numbers.
type Index []IndexField

// IndexField is one INDEX field's value: a number, or an enum name the
// decoding database resolves (MQIS info_type=MODEL_NAME) when Enum is set.
type IndexField struct {
	Path  string
	Value uint64
	Enum  string
}

// At is an index of one field.
func At(path string, v uint64) Index { return Index{{Path: path, Value: v}} }

// LocalPort is the index of a port register: local_port=p.
func LocalPort(p int) Index { return At("local_port", uint64(p)) }

// With adds a field; x itself is not changed, so a port's index can be
// shared by the reads that extend it.
func (x Index) With(path string, v uint64) Index {
	return append(x[:len(x):len(x)], IndexField{Path: path, Value: v})
}

// Named adds a field given by its enum name.
func (x Index) Named(path, enum string) Index {
	return append(x[:len(x):len(x)], IndexField{Path: path, Enum: enum})
}

// Page adds page_select=n (PDDR, and the other paged registers).
func (x Index) Page(n int) Index { return x.With("page_select", uint64(n)) }

// Group adds grp=g (PPCNT, MPCNT counter groups).
func (x Index) Group(g uint64) Index { return x.With("grp", g) }

// Join is x followed by the fields of y.
func (x Index) Join(y Index) Index { return append(x[:len(x):len(x)], y...) }

// Lookup is the number a field is given (false when it is not given or is
// given by name).
func (x Index) Lookup(path string) (uint64, bool) {
	for _, f := range x {
		if f.Path == path && f.Enum == "" {
			return f.Value, true
		}
	}
	return 0, false
}

// Has says whether the field is given.
func (x Index) Has(path string) bool {
	for _, f := range x {
		if f.Path == path {
			return true
		}
	}
	return false
}

// String is the index as `reg get --index` takes it:
// "local_port=1,page_select=0".
func (x Index) String() string {
	var b strings.Builder
	for i, f := range x {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.Path)
		b.WriteByte('=')
		b.WriteString(f.text())
	}
	return b.String()
}

func (f IndexField) text() string {
	if f.Enum != "" {
		return f.Enum
	}
	return strconv.FormatUint(f.Value, 10)
}

// Assignments is the index as dev takes it.
func (x Index) Assignments() []prm.Assignment {
	as := make([]prm.Assignment, 0, len(x))
	for _, f := range x {
		as = append(as, prm.Assignment{Path: f.Path, Value: f.text()})
	}
	return as
}

// laterIndex are index fields later revisions add to registers cxray
// reads that dev does not default (dev.DefaultIndex covers plane_ind,
// lp_gl and module_ind_type), with the value that asks what older
// revisions answered: Rev 0.62 adds PPLM test_mode (0: mission mode) and
// PPLR lb_cap_mode_idx and lb_link_mode_idx (0: the operational mode's
// loopback capabilities; mlxlink asks for 1 in PRBS test mode only), Rev
// 0.64 PPLM and PDDR resilink_fec_ind and SLRG all_lanes and
// measurements_thresholds. dev requires every index field of the decoding
// database and refuses fields it does not have, so each is given only
// where the database has it. (They belong in dev.RegisterIndex, where
// `reg get` would use them too.)
var laterIndex = map[string]Index{
	"PPLM": At("test_mode", 0).With("resilink_fec_ind", 0),
	"PDDR": At(pddrOpPage+"resilink_fec_ind", 0),
	"SLRG": At("all_lanes", 0).With("measurements_thresholds", 0),
	"PPLR": At("lb_cap_mode_idx", 0).With("lb_link_mode_idx", 0),
	// Rev 0.64 PPTT and PPRT: the primary side (0), mode A (0) and
	// encoding mode index 0, the one configuration older revisions had.
	"PPTT": At("primary_secondary_idx", 0).With("mode_b_idx", 0).With("enc_mode_index", 0),
	"PPRT": At("primary_secondary_idx", 0).With("mode_b_idx", 0).With("enc_mode_index", 0),
}

// pddrOpPage is the path of PDDR's operational page (page_select 0).
const pddrOpPage = "page_data.pddr_operation_info_page_ext."

// LaterIndex lists the index fields reg needs in db beyond those given:
// the ones later revisions add, where db has them.
func LaterIndex(db *prm.DB, reg string, given Index) Index {
	if db == nil {
		return nil
	}
	r, err := db.Register(reg)
	if err != nil {
		return nil
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		return nil
	}
	var out Index
	buf := p.NewBuffer()
	for _, f := range laterIndex[reg] {
		if page, ok := given.Lookup("page_select"); strings.HasPrefix(f.Path, pddrOpPage) && (!ok || page != 0) {
			continue // a field of the operational page only
		}
		if _, err := p.Resolve(f.Path, buf); err == nil {
			out = append(out, f)
		}
	}
	return out
}
