package nvconf_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/nvconf"
)

// The switch database is mstflint's smaller one (same schema): it keeps
// these tests and the fuzz target fast.
const switchDB = "/usr/share/mstflint/mlxconfig_dbs/mlxconfig_switch.db"

func sqliteBytes(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("SKIP: %s is not installed (apt-get install -y mstflint): %v", path, err)
	}
	return b
}

func loadBytes(t testing.TB, b []byte) (*nvconf.DB, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "db.sqlite")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return nvconf.LoadSQLite(p)
}

// A cut or damaged database is refused whole with the reason, never half
// loaded.
func TestSQLiteDamaged(t *testing.T) {
	for _, path := range []string{nvconf.MstflintPath, switchDB} {
		b := sqliteBytes(t, path)
		if _, err := loadBytes(t, b); err != nil {
			t.Fatalf("%s intact: %v", path, err)
		}
		for _, n := range []int{50, 100, 1024, len(b) / 2, len(b) / 2 / 1024 * 1024, len(b) - 1024, len(b) - 1} {
			db, err := loadBytes(t, b[:n])
			var ce *nvconf.CorruptDBError
			if err == nil {
				t.Fatalf("%s cut to %d bytes: loaded %d TLVs", path, n, len(db.TLVs))
			}
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "cut short") {
				t.Errorf("%s cut to %d: %v", path, n, err)
			}
		}
		// Damage in the b-tree pages: the reader's structural checks find it.
		bad := append([]byte(nil), b...)
		for i := len(b) / 5; i < len(b)/5+300; i++ {
			bad[i] ^= 0x5a
		}
		_, err := loadBytes(t, bad)
		var ce *nvconf.CorruptDBError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "damaged") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s damaged: %v", path, err)
		}
	}
}

// Corrupted copies of the database: loading never panics or hangs; what
// loads is usable (every parameter reads from its TLV's data).
func FuzzSQLiteCorrupted(f *testing.F) {
	b := sqliteBytes(f, switchDB)
	f.Add(uint32(1000), []byte{0xff}, uint32(0))
	f.Add(uint32(100), []byte{0, 0, 0, 0}, uint32(0))
	f.Add(uint32(20000), []byte("garbage"), uint32(30000))
	f.Fuzz(func(t *testing.T, at uint32, flip []byte, cut uint32) {
		c := append([]byte(nil), b...)
		for i, x := range flip {
			if p := int(at) + i; p < len(c) {
				c[p] ^= x
			}
		}
		if cut > 0 && int(cut) < len(c) {
			c = c[:cut]
		}
		db, err := loadBytes(t, c)
		if err != nil {
			return
		}
		// Every parameter that loaded reads from its TLV's data.
		for _, tl := range db.TLVs {
			data := make([]byte, tl.Size)
			for _, p := range tl.Params {
				_ = p.FormatData(data, 0)
				if p.Type == nvconf.TypeString || p.Type == nvconf.TypeBytes {
					continue
				}
				for i := 0; i < p.Elems(); i++ {
					if _, err := p.Get(data, i); err != nil {
						t.Fatalf("%s.%s loaded but does not read from its %d bytes: %v", tl.Name, p.Name, tl.Size, err)
					}
				}
			}
		}
	})
}
