package nvstore

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
)

// State is what a store holds beyond its defaults: the TLVs written to NV,
// the current values that differ from the defaults, and an armed reset. It
// marshals to JSON, so a test or tool can save an emulated adapter's
// configuration and load it into another. (The CLI's emulator keeps its
// whole device state between commands through emu/state instead.)
type State struct {
	Records []StateTLV `json:"records"`
	Current []StateTLV `json:"current,omitempty"`
	Armed   bool       `json:"armed,omitempty"`
}

// StateTLV is one TLV of a State.
type StateTLV struct {
	Type    string `json:"type"` // "0x00000080"
	TLV     string `json:"tlv,omitempty"`
	Version int    `json:"version,omitempty"`
	Writer  uint8  `json:"writer,omitempty"`
	Data    string `json:"data"` // hex
}

// State returns the store's state.
func (s *Store) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st State
	for _, e := range s.recordsInOrder() {
		st.Records = append(st.Records, StateTLV{Type: fmt.Sprintf("0x%08x", e.inst.Type()), TLV: e.inst.String(), Version: e.nv.version, Writer: e.nv.writer, Data: hex.EncodeToString(e.nv.data)})
	}
	var types []uint32
	for t, e := range s.entries {
		if string(e.current) != string(e.factory) {
			types = append(types, t)
		}
	}
	sort.Slice(types, func(i, j int) bool { return types[i] < types[j] })
	for _, t := range types {
		e := s.entries[t]
		st.Current = append(st.Current, StateTLV{Type: fmt.Sprintf("0x%08x", t), TLV: e.inst.String(), Data: hex.EncodeToString(e.current)})
	}
	st.Armed = s.armed
	return st
}

// SetState replaces the store's written TLVs and current values with a
// saved state. It checks everything before changing anything.
func (s *Store) SetState(st State) error {
	type item struct {
		e    *entry
		data []byte
		t    StateTLV
	}
	parse := func(list []StateTLV, what string) ([]item, error) {
		var out []item
		for i, t := range list {
			typ, err := strconv.ParseUint(t.Type, 0, 32)
			if err != nil {
				return nil, fmt.Errorf("nvstore: state %s %d: type %q is not a number", what, i, t.Type)
			}
			e := s.entries[uint32(typ)]
			if e == nil {
				return nil, fmt.Errorf("nvstore: state %s %d: type %s is not stored by this adapter", what, i, t.Type)
			}
			d, err := hex.DecodeString(t.Data)
			if err != nil || len(d) != e.inst.TLV.Size {
				return nil, fmt.Errorf("nvstore: state %s %d (%s): data must be %d bytes of hex", what, i, e.inst, e.inst.TLV.Size)
			}
			if t.Version < 0 || t.Version > 15 {
				return nil, fmt.Errorf("nvstore: state %s %d (%s): version %d is outside 0..15", what, i, e.inst, t.Version)
			}
			out = append(out, item{e, d, t})
		}
		return out, nil
	}
	recs, err := parse(st.Records, "record")
	if err != nil {
		return err
	}
	curs, err := parse(st.Current, "current")
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		e.nv = nil
		copy(e.current, e.factory)
	}
	s.seq = 0
	for _, r := range recs {
		s.seq++
		r.e.nv = &record{data: r.data, version: r.t.Version, writer: r.t.Writer, seq: s.seq}
	}
	for _, c := range curs {
		copy(c.e.current, c.data)
	}
	s.armed = st.Armed
	return nil
}
