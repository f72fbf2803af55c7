package nvconf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/sqlitefile"
)

// MstflintPath is where Debian's mstflint installs the host NV database.
const MstflintPath = "/usr/share/mstflint/mlxconfig_dbs/mlxconfig_host.db"

// LoadSQLite reads mstflint's NV database (SQLite, tables tlvs and params).
// The file is read whole into memory by internal/sqlitefile, a read-only
// reader of the file format (no SQL engine is linked: see
// docs/performance.md), so nothing is ever written to it.
func LoadSQLite(path string) (*DB, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("nvconf: %w", err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("nvconf: %s is a directory; give the mlxconfig_host.db file", path)
	}
	if fi.Size() > maxDBBytes {
		return nil, fmt.Errorf("nvconf: %s is %d bytes, more than an NV database holds (%d); give mstflint's mlxconfig_host.db (%s)", path, fi.Size(), maxDBBytes, MstflintPath)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("nvconf: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxDBBytes+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("nvconf: %s: %w", path, err)
	}
	// Check the magic first so a wrong file gets a clear message.
	if len(b) < 16 || string(b[:15]) != "SQLite format 3" {
		return nil, fmt.Errorf("nvconf: %s is not an SQLite database; give mstflint's mlxconfig_host.db (%s)", path, MstflintPath)
	}
	if err := checkSQLiteSize(b[:min(len(b), 100)], int64(len(b))); err != nil {
		return nil, fmt.Errorf("nvconf: %s: %w", path, err)
	}
	file, err := sqlitefile.Open(b)
	if err != nil {
		return nil, fmt.Errorf("nvconf: %s: %w", path, damaged(err))
	}
	tlvs, descr, problems, err := readSQLite(file)
	if err != nil {
		return nil, fmt.Errorf("nvconf: %s: %w", path, damaged(err))
	}
	db, err := NewDB(path, tlvs, descr)
	if err != nil {
		return nil, fmt.Errorf("nvconf: %w", err)
	}
	db.Warnings = append(problems, db.Warnings...)
	return db, nil
}

// maxDBBytes bounds the file read (the 2026 host database is 288 KiB).
const maxDBBytes = 64 << 20

// damaged names a structural error of the file as a *CorruptDBError.
func damaged(err error) error {
	var ce *sqlitefile.CorruptError
	if errors.As(err, &ce) {
		return &CorruptDBError{Msg: "the database is damaged (" + err.Error() + ")"}
	}
	return err
}

// CorruptDBError is a parameter database file that is damaged: cut short
// or failing SQLite's own check. It is refused whole, never half loaded.
type CorruptDBError struct{ Msg string }

func (e *CorruptDBError) Error() string {
	return e.Msg + "; reinstall it (apt-get install --reinstall mstflint) or give another with --nvdb (or --nvdb builtin)"
}

// checkSQLiteSize compares the file's size with what its header says
// (the SQLite file format: page size at offset 16, the page count at 28,
// valid when the "version-valid-for" number at 92 equals the change
// counter at 24), so a file cut short is named as such.
func checkSQLiteSize(hdr []byte, size int64) error {
	if len(hdr) < 100 {
		return &CorruptDBError{Msg: fmt.Sprintf("the file is %d bytes, shorter than an SQLite header: it was cut short", size)}
	}
	page := int64(binary.BigEndian.Uint16(hdr[16:]))
	if page == 1 {
		page = 65536
	}
	if page < 512 || page&(page-1) != 0 {
		return &CorruptDBError{Msg: fmt.Sprintf("the header's page size %d is not one SQLite uses: the file is damaged", page)}
	}
	if size%page != 0 {
		return &CorruptDBError{Msg: fmt.Sprintf("the file is %d bytes, not a whole number of %d-byte pages: it was cut short or damaged", size, page)}
	}
	pages := int64(binary.BigEndian.Uint32(hdr[28:]))
	if binary.BigEndian.Uint32(hdr[92:]) == binary.BigEndian.Uint32(hdr[24:]) && pages > 0 && pages*page > size {
		return &CorruptDBError{Msg: fmt.Sprintf("the header says %d pages (%d bytes); the file has %d bytes: it was cut short", pages, pages*page, size)}
	}
	return nil
}

// readSQLite reads both tables. Columns are looked up by name, so newer
// databases with extra columns load too.
func readSQLite(f *sqlitefile.File) ([]*TLV, bool, []string, error) {
	rows, err := tableMaps(f, "tlvs")
	if err != nil {
		return nil, false, nil, fmt.Errorf("table tlvs: %w (is this an mlxconfig database?)", err)
	}
	byName := map[string]*TLV{}
	var tlvs []*TLV
	descr := false
	for i, r := range rows {
		t := &TLV{Name: r["name"], Target: r["target"], Title: r["mlxconfig_name"], Descr: r["description"]}
		if t.Descr != "" {
			descr = true
		}
		var err error
		id, err := atoi(r, "id")
		if err == nil {
			t.ID = uint32(id)
			var c, sz, cp int
			if c, err = atoi(r, "class"); err == nil {
				t.Class = Class(c)
				if sz, err = atoi(r, "size"); err == nil {
					t.Size = sz
					cp, err = atoi(r, "cap")
					t.Cap = cp != 0
				}
			}
		}
		if err != nil {
			return nil, false, nil, fmt.Errorf("tlvs row %d (%s): %w", i+1, t.Name, err)
		}
		t.Version, _ = strconv.Atoi(strings.TrimSpace(r["version"]))
		if byName[t.Name] == nil {
			byName[t.Name] = t
		}
		tlvs = append(tlvs, t)
	}
	prow, err := tableMaps(f, "params")
	if err != nil {
		return nil, false, nil, fmt.Errorf("table params: %w", err)
	}
	var problems []string
	for i, r := range prow {
		t := byName[r["tlv_name"]]
		if t == nil {
			problems = append(problems, fmt.Sprintf("params row %d (%s): TLV %q is not in table tlvs", i+1, r["name"], r["tlv_name"]))
			continue
		}
		p, err := paramFromRow(r)
		if err != nil {
			problems = append(problems, fmt.Sprintf("params row %d (%s.%s): %v", i+1, r["tlv_name"], r["name"], err))
			continue
		}
		if p.Descr != "" {
			descr = true
		}
		t.Params = append(t.Params, p)
	}
	if len(problems) > 0 && len(problems) == len(prow) {
		return nil, false, nil, errors.New(problems[0])
	}
	return tlvs, descr, problems, nil
}

// paramFromRow builds a parameter from a params row.
func paramFromRow(r map[string]string) (*Param, error) {
	p := &Param{
		Name: r["name"], MlxName: r["mlxconfig_name"], OffsetText: r["offset"], SizeText: r["size"],
		Dependency: r["dependency"], ValidBit: r["valid_bit"], TempVars: r["temp_vars"],
		MinVal: r["min_val"], MaxVal: r["max_val"], Rule: r["rule"], Regex: r["regex"], Descr: r["description"],
	}
	var err error
	if p.Type, err = ParseType(r["type"]); err != nil {
		return nil, err
	}
	if p.Offset, err = ParseByteBit(p.OffsetText); err != nil {
		return nil, fmt.Errorf("offset: %w", err)
	}
	if p.Size, err = ParseByteBit(p.SizeText); err != nil {
		return nil, fmt.Errorf("size: %w", err)
	}
	if v := strings.TrimSpace(r["supported_from_version"]); v != "" {
		if p.FromVersion, err = strconv.Atoi(v); err != nil {
			return nil, fmt.Errorf("supported_from_version %q is not a number", v)
		}
	}
	if v := strings.TrimSpace(r["array_length"]); v != "" {
		if p.ArrayLen, err = strconv.Atoi(v); err != nil {
			return nil, fmt.Errorf("array_length %q is not a number", v)
		}
	}
	if tv := strings.TrimSpace(r["textual_values"]); tv != "" {
		if p.Enum, err = ParseEnum(tv); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// ParseEnum reads "NAME=0xV,NAME=V,..." (the database's textual_values).
func ParseEnum(s string) ([]EnumValue, error) {
	var out []EnumValue
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("textual value %q is not NAME=VALUE", part)
		}
		u, err := strconv.ParseUint(strings.TrimSpace(v), 0, 64)
		if err != nil {
			return nil, fmt.Errorf("textual value %q: %q is not a number", part, v)
		}
		out = append(out, EnumValue{Name: strings.TrimSpace(n), Value: u})
	}
	return out, nil
}

func atoi(r map[string]string, col string) (int, error) {
	v := strings.TrimSpace(r[col])
	n, err := strconv.ParseInt(v, 0, 64)
	if err != nil || n < 0 || n > 1<<32-1 {
		return 0, fmt.Errorf("column %s: %q is not a non-negative number", col, v)
	}
	return int(n), nil
}

// maxRows bounds what one table may hold (the 2026 host database has 1,541
// params): a hostile file cannot make cxray read forever.
const maxRows = 100000

// tableMaps reads a table in rowid order and returns each row as column ->
// text (NULL is "").
func tableMaps(f *sqlitefile.File, table string) ([]map[string]string, error) {
	cols, rows, err := f.Table(table)
	if err != nil {
		return nil, err
	}
	if len(rows) > maxRows {
		return nil, fmt.Errorf("more than %d rows", maxRows)
	}
	out := make([]map[string]string, 0, len(rows))
	for _, r := range rows {
		m := make(map[string]string, len(cols))
		for i, c := range cols {
			m[strings.ToLower(c)] = r[i]
		}
		out = append(out, m)
	}
	return out, nil
}
