package langgraph

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"

	"github.com/google/uuid"

	"github.com/signalgate/signalgate/inbox"
)

// threadNamespace scopes the LangGraph thread ids the gateway derives.
func threadNamespace() uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://signalgate.dev/targets/langgraph/thread"))
}

// ThreadID is the LangGraph thread of gateway thread k: a UUIDv5 of its agent, resource
// and thread (the server takes UUIDs only), the same on every replica and after
// restarts.
func ThreadID(k inbox.ThreadKey) string {
	return uuid.NewSHA1(threadNamespace(), []byte(k.Agent+"\x00"+k.Resource+"\x00"+k.Thread)).String()
}

// webhookSig is the signature a run's webhook URL carries: an HMAC-SHA256, keyed by
// callback_token, of the thread and the gateway run the LangGraph run belongs to.
func webhookSig(token []byte, k inbox.ThreadKey, gatewayRun string) string {
	m := hmac.New(sha256.New, token)
	m.Write([]byte("signalgate langgraph webhook\x00" + k.Agent + "\x00" + k.Resource + "\x00" + k.Thread + "\x00" + gatewayRun))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
