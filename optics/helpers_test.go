package optics

import (
	"encoding/json"
	"math"
	"testing"
)

// img builds module memory by hand for the tests: each half page starts as
// zeros and the test writes the bytes the spec places.
type img struct {
	halves map[PageAddr]*[HalfSize]byte
	order  []PageAddr
}

func newImg() *img { return &img{halves: map[PageAddr]*[HalfSize]byte{}} }

func (m *img) half(i2c, bank, page uint8, addr int) (*[HalfSize]byte, int) {
	a := PageAddr{I2C: i2c, Bank: bank, Page: page}
	base := 0
	if addr >= HalfSize {
		a.Offset, base = HalfSize, HalfSize
	}
	a = canonical(a)
	h := m.halves[a]
	if h == nil {
		h = &[HalfSize]byte{}
		m.halves[a] = h
		m.order = append(m.order, a)
	}
	return h, base
}

// set writes bytes at absolute address addr of (i2c, bank, page).
func (m *img) set(i2c, bank, page uint8, addr int, b ...byte) *img {
	for i, v := range b {
		h, base := m.half(i2c, bank, page, addr+i)
		h[addr+i-base] = v
	}
	return m
}

func (m *img) u16(i2c, bank, page uint8, addr int, v uint16) *img {
	return m.set(i2c, bank, page, addr, byte(v>>8), byte(v))
}

func (m *img) str(i2c, bank, page uint8, addr, n int, s string) *img {
	for i := 0; i < n; i++ {
		c := byte(' ')
		if i < len(s) {
			c = s[i]
		}
		m.set(i2c, bank, page, addr+i, c)
	}
	return m
}

// touch makes a half page exist (all zeros) without writing to it.
func (m *img) touch(i2c, bank, page uint8, addr int) *img { m.half(i2c, bank, page, addr); return m }

// sum writes the check code of [from, to] at at.
func (m *img) sum(i2c, bank, page uint8, from, to, at int) *img {
	var s byte
	for i := from; i <= to; i++ {
		h, base := m.half(i2c, bank, page, i)
		s += h[i-base]
	}
	return m.set(i2c, bank, page, at, s)
}

func (m *img) image() *Image {
	im := &Image{}
	for _, a := range m.order {
		im.Add(a, m.halves[a][:])
	}
	return im
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsInf(want, 0) && got == want {
		return
	}
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v (±%v)", what, got, want, tol)
	}
}

func mustDecode(t *testing.T, im *Image) *Module {
	t.Helper()
	m, err := Decode(im)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if _, err := json.Marshal(m); err != nil {
		t.Fatalf("the module does not marshal: %v", err)
	}
	return m
}

// mwOf converts a raw power count (0.1 µW) the way the spec says.
func mwOf(raw uint16) float64 { return float64(raw) * 0.1 / 1000 }
