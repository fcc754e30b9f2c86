package daemonfake

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"trap-sandbox/internal/protocol"
)

// OutsideNames is a computer whose drive holds, in /d, files put there from outside CC under
// names no path reaches (cctext.NamesItself): fs.list of /d lists them beside what Local
// holds there (asked as /d or /d/), each a file of 5 bytes (sub\x01 a directory), and a path of one reads what CC's
// fs takes it for (a\x01b.txt reads ab.txt), as fakecraft and CC do.
type OutsideNames struct{ *Local }

// Request implements computer.Transport: Local's answer, with the names in /d's listing.
func (o OutsideNames) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	answer, err := o.Local.Request(ctx, traposID, typ, payload, timeout)
	var p struct{ Path string }
	if err != nil || typ != protocol.TypeFSList || json.Unmarshal(payload, &p) != nil || strings.TrimSuffix(p.Path, "/") != "/d" {
		return answer, err
	}
	var listed struct {
		Entries []map[string]any `json:"entries"`
	}
	if err := json.Unmarshal(answer, &listed); err != nil {
		return nil, err
	}
	for _, name := range []string{"a\x01b.txt", " ab.txt", "ab?.txt", "..."} {
		listed.Entries = append(listed.Entries, map[string]any{"name": name, "isDir": false, "size": 5})
	}
	listed.Entries = append(listed.Entries, map[string]any{"name": "sub\x01", "isDir": true, "size": 0})
	return json.Marshal(listed)
}
