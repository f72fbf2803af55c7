package conformance

import (
	"fmt"
	"strconv"
	"strings"
)

// MstregValue is one row of `mstreg --get`: a leaf name as mstreg prints it
// (psid[3], module_0, counter_hi) and its value. mstreg prints every leaf
// of the register as 0x%08x, union members included, without enum names.
type MstregValue struct {
	Name  string
	Value uint32
}

// MstregField is one row of `mstreg --show_reg`: where a leaf lives. Addr
// is the byte offset of its dword, LSB the bit offset of its lowest bit
// within that big-endian dword, Size its width in bits.
type MstregField struct {
	Name      string
	Addr, LSB int
	Size      int
	Access    string
}

// Bit is the leaf's MSB-first bit offset from the start of the register,
// the convention of cxray's prm package.
func (f MstregField) Bit() int { return f.Addr*8 + 32 - f.LSB - f.Size }

// tableRows returns the cells of the rows of mstreg's table: the lines
// between the first two rules of '=' (the header is above the first).
func tableRows(out string) ([][]string, error) {
	var rows [][]string
	rules := 0
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		if t != "" && strings.Trim(t, "=") == "" {
			rules++
			if rules == 2 {
				return rows, nil
			}
			continue
		}
		if rules != 1 || t == "" {
			continue
		}
		cells := strings.Split(t, "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	if rules == 0 {
		return nil, fmt.Errorf("no table in mstreg's output (no line of '='):\n%s", out)
	}
	return nil, fmt.Errorf("mstreg's table is not closed by a line of '=' (output cut short?)")
}

// ParseMstregGet reads the `Field Name | Data` table of `mstreg --get`.
func ParseMstregGet(out string) ([]MstregValue, error) {
	rows, err := tableRows(out)
	if err != nil {
		return nil, err
	}
	vals := make([]MstregValue, 0, len(rows))
	for _, c := range rows {
		if len(c) != 2 || c[0] == "" {
			return nil, fmt.Errorf("mstreg --get row %q: want `name | 0xVALUE`", strings.Join(c, "|"))
		}
		v, err := strconv.ParseUint(c[1], 0, 32)
		if err != nil {
			return nil, fmt.Errorf("mstreg --get row %s: value %q: %v", c[0], c[1], err)
		}
		vals = append(vals, MstregValue{Name: c[0], Value: uint32(v)})
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("mstreg --get printed an empty table")
	}
	return vals, nil
}

// ParseMstregShowReg reads the table of `mstreg --show_reg NAME`.
func ParseMstregShowReg(out string) ([]MstregField, error) {
	rows, err := tableRows(out)
	if err != nil {
		return nil, err
	}
	fields := make([]MstregField, 0, len(rows))
	for _, c := range rows {
		if len(c) != 5 || c[0] == "" {
			return nil, fmt.Errorf("mstreg --show_reg row %q: want 5 cells", strings.Join(c, "|"))
		}
		addr, err1 := strconv.ParseUint(c[1], 0, 32)
		lsb, err2 := strconv.Atoi(c[2])
		size, err3 := strconv.Atoi(c[3])
		if err1 != nil || err2 != nil || err3 != nil || size <= 0 || size > 32 || lsb < 0 || lsb+size > 32 {
			return nil, fmt.Errorf("mstreg --show_reg row %q: bad address, offset or size", strings.Join(c, "|"))
		}
		fields = append(fields, MstregField{Name: c[0], Addr: int(addr), LSB: lsb, Size: size, Access: c[4]})
	}
	return fields, nil
}
