package bench

import (
	"strconv"
	"testing"
)

// BenchmarkAPingAnswer is the bench's computers' work for one ping of (b), decoding the
// gateway_request and writing the answer, with the message id each server mints: the
// baseline's counter and the gateway's random UUID (docs/performance.md, "Message ids").
func BenchmarkAPingAnswer(b *testing.B) {
	for name, id := range map[string]string{"counter": "b" + strconv.Itoa(68), "uuid": randomUUID()} {
		frame := []byte(`{"event":"gateway_request","traposReceiverId":"23:bench","messageId":"` + id + `","type":"ping","payload":{}}`)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, _, ok := pingAnswer("23:bench", frame); !ok {
					b.Fatal("no answer")
				}
			}
		})
	}
}
