package state

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// FuzzScan reads arbitrary bytes as the records of a log. Properties: it
// never panics; the good part it reports is a prefix of the input; every
// record it returns encodes and scans back to itself; a log with nothing
// torn and no error was read to its end; and records encoded by Append,
// followed by the fuzzed bytes, are all read back in order.
func FuzzScan(f *testing.F) {
	good, _ := encodeLine(Record{Kind: KindRegister, Time: time.Unix(1, 2).UTC(), BDF: "0000:03:00.0", ID: 0x5006, Method: 2, Data: []byte{1, 2}})
	f.Add(good)
	f.Add(append(append([]byte{}, good...), good[:20]...))
	f.Add([]byte("00000000 {}\n"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, end, torn, err := scan(bytes.NewReader(b), 0, int64(len(b)))
		if end < 0 || end > int64(len(b)) {
			t.Fatalf("end %d outside 0..%d", end, len(b))
		}
		if err == nil && !torn && end != int64(len(b)) {
			t.Fatalf("read to %d of %d without a torn tail", end, len(b))
		}
		if err == nil {
			for _, r := range recs {
				line, err := encodeLine(r)
				if err != nil {
					t.Fatal(err)
				}
				again, _, _, err := scan(bytes.NewReader(line), 0, int64(len(line)))
				if err != nil || len(again) != 1 || !cmp.Equal(again[0], r) {
					t.Fatalf("%+v does not scan back: %+v %v", r, again, err)
				}
			}
		}
		// Good records first: all read back, whatever follows (unless what
		// follows is a damaged record with good ones after it).
		in := append(append(append([]byte{}, good...), good...), b...)
		recs, end, _, err = scan(bytes.NewReader(in), 0, int64(len(in)))
		if err == nil && (len(recs) < 2 || end < int64(2*len(good))) {
			t.Fatalf("lost the good records: %d, end %d", len(recs), end)
		}
	})
}
