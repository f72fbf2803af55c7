package monitor

import "github.com/cxray/cxray/prm"

// What is a --what register entry as monitor reads it: "PDDR[page_select=3,
// local_port=1]" names register PDDR, those index fields, and the key
// prefix its values are recorded under ("pddr.page_select_3.local_port_1").
type What struct {
	Register string
	Index    []prm.Assignment
	Key      string
}

// ParseWhat reads a --what register entry (REG or REG[field=value,...]).
func ParseWhat(w string) (What, error) {
	rc, err := parseRegCollector(w)
	if err != nil {
		return What{}, err
	}
	return What{Register: rc.reg, Index: rc.index, Key: rc.key}, nil
}
