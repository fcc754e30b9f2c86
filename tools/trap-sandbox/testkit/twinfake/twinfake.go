// Package twinfake plays, in the heartbeats' bucket, the older of two replicas of one name
// (two copies of one configuration started at once), for the tests of the newer one's yield.
package twinfake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Outbeat writes older, the older replica's heartbeat, under key in kv over each heartbeat of
// the newer replica there, as the older one does when it sees its twin's (cluster's twin.go),
// and returns once the newer one's heartbeat says it yielded, or with ctx's error.
//
// Written once, the older one's heartbeat may go unseen: the bucket keeps one revision a key,
// so the newer one's next heartbeat may replace it before the newer one's watcher was sent it,
// and one written before that watcher had the newer one's own first heartbeat back is taken
// for a previous run's, which never writes again.
func Outbeat(ctx context.Context, kv jetstream.KeyValue, key string, older []byte) error {
	w, err := kv.Watch(ctx, key)
	if err != nil {
		return err
	}
	defer func() { _ = w.Stop() }()
	for {
		var e jetstream.KeyValueEntry
		var ok bool
		select {
		case e, ok = <-w.Updates():
		case <-ctx.Done():
		}
		if !ok {
			why := context.Cause(ctx)
			if why == nil {
				why = errors.New("the watch ended")
			}
			return fmt.Errorf("the newer replica's heartbeat under %s never said it yielded: %w", key, why)
		}
		if e == nil || e.Operation() != jetstream.KeyValuePut || bytes.Equal(e.Value(), older) {
			continue // the end of the values there were, a goodbye, or the older one's own
		}
		var beat struct {
			Yielded bool `json:"yielded"`
		}
		if err := json.Unmarshal(e.Value(), &beat); err != nil {
			return fmt.Errorf("not a heartbeat under %s: %s", key, e.Value())
		}
		if beat.Yielded {
			return nil
		}
		// Over this heartbeat only: one the newer replica wrote since is answered in its turn.
		if _, err := kv.Update(ctx, key, older, e.Revision()); err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return err
		}
	}
}
