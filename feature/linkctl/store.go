package linkctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Store keeps each port's last change, so that --undo can restore the
// fields it touched. One file per device and port, replaced atomically
// (written aside, then renamed): a command killed while saving leaves the
// previous record or the new one, never half of one.
type Store struct{ Dir string }

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, s)
}

func (s Store) path(device string, port int) string {
	return filepath.Join(s.Dir, fmt.Sprintf("%s-port%d.json", safeName(device), port))
}

// Save records c's undo writes for its device and port.
func (s Store) Save(c *Change) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	p := s.path(c.Device, c.Port)
	tmp, err := os.CreateTemp(s.Dir, ".undo-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// ErrNothingToUndo says no change of the port was recorded.
var ErrNothingToUndo = errors.New("nothing to undo")

// Load reads the record of the last change of device's port.
func (s Store) Load(device string, port int) (*Change, error) {
	b, err := os.ReadFile(s.path(device, port))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: cxray has no change of port %d on %s on record (in %s)", ErrNothingToUndo, port, device, s.Dir)
	}
	if err != nil {
		return nil, err
	}
	var c Change
	if err := json.Unmarshal(b, &c); err != nil || len(c.Undo) == 0 {
		return nil, fmt.Errorf("the undo record %s is not one cxray wrote (%v); remove it", s.path(device, port), err)
	}
	return &c, nil
}

// Remove forgets the record once it was undone.
func (s Store) Remove(device string, port int) error {
	err := os.Remove(s.path(device, port))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
