package sqlitefile_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	_ "modernc.org/sqlite" // the reference: SQLite itself, in tests only

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/internal/sqlitefile"
)

// databases are the SQLite files at hand: mstflint's installed ones and the
// NV databases of the PRM history.
func databases(t testing.TB) []string {
	t.Helper()
	paths, _ := filepath.Glob("/usr/share/mstflint/mlxconfig_dbs/*.db")
	if dir, ok := prmhistorytest.Dir(); ok {
		more, _ := filepath.Glob(filepath.Join(dir, "*.db"))
		paths = append(paths, more...)
	}
	if len(paths) == 0 {
		t.Skip("SKIP: no SQLite database here (apt-get install -y mstflint)")
	}
	return paths
}

// reference reads every table of a file through SQLite: the schema's
// table names, and per table its column names and rows in rowid order as
// database/sql scans them into strings.
func reference(t testing.TB, path string) (map[string][]string, map[string][][]string, error) {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&immutable=1")
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	ctx := context.Background()
	var check string
	if err := conn.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&check); err != nil || check != "ok" {
		return nil, nil, errors.Join(err, errors.New(check))
	}
	names, err := query(ctx, conn, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY rowid")
	if err != nil {
		return nil, nil, err
	}
	cols, rows := map[string][]string{}, map[string][][]string{}
	for _, n := range names {
		r, err := conn.QueryContext(ctx, `SELECT * FROM "`+n[0]+`" ORDER BY rowid`)
		if err != nil {
			return nil, nil, err
		}
		cols[n[0]], _ = r.Columns()
		r.Close()
		if rows[n[0]], err = query(ctx, conn, `SELECT * FROM "`+n[0]+`" ORDER BY rowid`); err != nil {
			return nil, nil, err
		}
	}
	return cols, rows, nil
}

func query(ctx context.Context, conn *sql.DB, q string) ([][]string, error) {
	r, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cols, _ := r.Columns()
	out := [][]string{}
	for r.Next() {
		v := make([]sql.NullString, len(cols))
		p := make([]any, len(cols))
		for i := range v {
			p[i] = &v[i]
		}
		if err := r.Scan(p...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i := range v {
			row[i] = v[i].String
		}
		out = append(out, row)
	}
	return out, r.Err()
}

func read(t testing.TB, b []byte, tables []string) (map[string][]string, map[string][][]string, error) {
	f, err := sqlitefile.Open(b)
	if err != nil {
		return nil, nil, err
	}
	cols, rows := map[string][]string{}, map[string][][]string{}
	for _, n := range tables {
		c, r, err := f.Table(n)
		if err != nil {
			return nil, nil, err
		}
		if r == nil {
			r = [][]string{}
		}
		cols[n], rows[n] = c, r
	}
	return cols, rows, nil
}

// Every table of every database reads as SQLite reads it: the same columns
// and the same rows, value by value.
func TestSameAsSQLite(t *testing.T) {
	for _, path := range databases(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			wantCols, wantRows, err := reference(t, path)
			if err != nil {
				t.Fatalf("SQLite: %v", err)
			}
			var tables []string
			for n := range wantCols {
				tables = append(tables, n)
			}
			if len(tables) == 0 {
				t.Fatal("SQLite lists no tables")
			}
			cols, rows, err := read(t, b, tables)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantCols, cols); diff != "" {
				t.Errorf("columns (-SQLite +sqlitefile):\n%s", diff)
			}
			if diff := cmp.Diff(wantRows, rows); diff != "" {
				t.Errorf("rows (-SQLite +sqlitefile):\n%s", diff)
			}
			if _, _, err := func() (*sqlitefile.File, [][]string, error) {
				f, _ := sqlitefile.Open(b)
				_, r, err := f.Table("no_such_table")
				return f, r, err
			}(); !errors.Is(err, sqlitefile.ErrNoTable) {
				t.Errorf("a table the schema lacks: %v, want ErrNoTable", err)
			}
		})
	}
}

// A file that is not SQLite, or is cut anywhere, is refused as corrupt.
func TestCutAndForeign(t *testing.T) {
	b, err := os.ReadFile(databases(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 15, 99, 100, 512, 4096, len(b) / 2, len(b) - 4096, len(b) - 1} {
		if n < 0 || n >= len(b) {
			continue
		}
		_, err := sqlitefile.Open(b[:n])
		var ce *sqlitefile.CorruptError
		if !errors.As(err, &ce) {
			t.Errorf("cut to %d bytes: %v, want a CorruptError", n, err)
		}
	}
	if _, err := sqlitefile.Open([]byte("not a database at all, but long enough to have a header of one hundred bytes in it; more text....")); err == nil {
		t.Error("a text file opened")
	}
}

// Damaged copies: the reader never panics or runs away, and whenever it
// reads a table SQLite also reads without complaint, the rows are SQLite's.
func FuzzDamaged(f *testing.F) {
	path := "/usr/share/mstflint/mlxconfig_dbs/mlxconfig_switch.db"
	b, err := os.ReadFile(path)
	if err != nil {
		f.Skipf("SKIP: %s: %v", path, err)
	}
	f.Add(uint32(1000), []byte{0xff})
	f.Add(uint32(4096+8), []byte{0, 0, 0, 9})
	f.Add(uint32(20000), []byte("garbage"))
	f.Add(uint32(32), []byte{0, 0, 0, 3})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, at uint32, flip []byte) {
		c := append([]byte(nil), b...)
		for i, x := range flip {
			if p := int(at) + i; p < len(c) {
				c[p] ^= x
			}
		}
		sf, err := sqlitefile.Open(c)
		if err != nil {
			return
		}
		p := filepath.Join(dir, "db")
		if err := os.WriteFile(p, c, 0o644); err != nil {
			t.Fatal(err)
		}
		wantCols, wantRows, err := reference(t, p)
		if err != nil {
			return // SQLite refuses a file this reader took: allowed (it checks more)
		}
		for n := range wantCols {
			cols, rows, err := sf.Table(n)
			if err != nil {
				continue
			}
			if rows == nil {
				rows = [][]string{}
			}
			if diff := cmp.Diff(wantCols[n], cols); diff != "" {
				t.Errorf("table %s columns (-SQLite +sqlitefile):\n%s", n, diff)
			}
			if diff := cmp.Diff(wantRows[n], rows); diff != "" {
				t.Errorf("table %s rows (-SQLite +sqlitefile):\n%s", n, diff)
			}
		}
	})
}
