package explain

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The eye section of mstlink -e as the emulator's degraded 400G link
// prints it (TestEyeVsMstlink compares these numbers with cxray's).
const mlxlinkEye = `EYE Opening Info
----------------
FOM Mode                        : SLRG_FOM_MODE_EYEC
Lane                            :      0,     1,     2,     3
Initial FOM                     :    144,   144,    66,   144
Last FOM                        :    144,   144,    66,   144
Upper Grades                    :     44,    44,    20,    44
Mid Grades                      :     48,    48,    22,    48
Lower Grades                    :     42,    42,    20,    42
`

const mlxlinkEyeJSON = `{"result": {"output": {"EYE Opening Info": {"FOM Mode": {"values": ["SLRG_FOM_MODE_EYEC"]},
 "Lane": {"values": ["0", "1"]}, "Last FOM": {"values": ["138", "60"]}, "Mid Grades": {"values": ["46", "20"]}}}},
 "status": {"code": 0, "message": "success"}}`

type eyeGot struct {
	Category, What string
	Partial        bool
}

func eyeFindings(t *testing.T, text string) []eyeGot {
	t.Helper()
	r, err := Explain(text, dbs(t))
	if err != nil {
		t.Fatal(err)
	}
	var got []eyeGot
	for _, p := range r.Parts {
		if p.Kind != KindMlxlink {
			continue
		}
		for _, f := range p.Findings {
			got = append(got, eyeGot{f.Category, f.What, p.Partial})
		}
	}
	return got
}

// A degraded lane in what users paste: the section as printed, indented
// with CRLF line ends under a prompt and its command line, the --json
// form; a healthy link names none; a section cut short (one row with
// fewer lanes) is an input finding, never a hardware one; a lane mlxlink
// shows as N/A is no reading.
func TestExplainMlxlinkEye(t *testing.T) {
	lane2 := eyeGot{CatHardware, "the receive eye of lane 2 is much smaller than the other lanes' (Last FOM)", false}
	indented := "$ sudo mstlink -d 03:00.1 -e\r\n" + strings.ReplaceAll("  "+strings.ReplaceAll(mlxlinkEye, "\n", "\n  "), "\n", "\r\n")
	cut := mlxlinkEye[:strings.Index(mlxlinkEye, "Lower Grades")] + "Lower Grades                    :     42,    42\n"
	for _, c := range []struct {
		name, text string
		want       []eyeGot
	}{
		{"as printed", mlxlinkEye, []eyeGot{lane2}},
		{"indented CRLF under a prompt", indented, []eyeGot{lane2}},
		{"json", mlxlinkEyeJSON, []eyeGot{{CatHardware, "the receive eye of lane 1 is much smaller than the other lanes' (Last FOM)", false}}},
		{"healthy", strings.ReplaceAll(mlxlinkEye, "66", "140"), nil},
		{"not measured", strings.ReplaceAll(mlxlinkEye, "    66,", "   N/A,"), nil},
		{"cut short", cut, []eyeGot{{CatInput, "the EYE Opening Info rows do not list the same lanes (Lower Grades: 2, Lane: 4): cut short?", true}}},
	} {
		if d := cmp.Diff(c.want, eyeFindings(t, c.text)); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}

// FuzzMlxlinkEye: whatever the eye section holds, a part that is partial
// carries no hardware finding, and a hardware finding about the eye names
// lanes the Lane row lists.
func FuzzMlxlinkEye(f *testing.F) {
	f.Add(mlxlinkEye)
	f.Add(mlxlinkEyeJSON)
	f.Add(mlxlinkEye[:len(mlxlinkEye)/2])
	d := dbs(f)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<14 {
			return
		}
		r, err := Explain(text, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range r.Parts {
			if p.Kind != KindMlxlink {
				continue
			}
			for _, fd := range p.Findings {
				if p.Partial && fd.Category == CatHardware {
					t.Fatalf("partial part with a hardware finding: %+v", fd)
				}
				lanes, ok := strings.CutPrefix(fd.What, "the receive eye of lane ")
				if !ok {
					continue
				}
				lanes, _, _ = strings.Cut(lanes, " is much smaller")
				kv, _ := p.Data.(map[string]map[string]string)
				var listed []string
				for s, m := range kv {
					if strings.EqualFold(s, eyeSection) {
						for k, v := range m {
							if strings.EqualFold(k, "Lane") {
								listed = splitList(v)
							}
						}
					}
				}
				for _, l := range strings.Split(lanes, ", ") {
					if len(listed) > 0 && !slices.Contains(listed, l) {
						t.Fatalf("finding names lane %q, the Lane row lists %v", l, listed)
					}
				}
			}
		}
	})
}
