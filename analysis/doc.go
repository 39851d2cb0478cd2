// Package analysis holds what the analyses of trace files share: the
// synchronization regions every analysis knows (DefaultSync) and the
// regions that run explicit tasks. The analyses live below it:
// variation (the time-dominant region and the SOS-time of its invocations,
// Weber et al.), score (measurement overhead per region, Oleynik's
// chapter 4), comm (who sent what to whom), trend and dynamics (how a run
// changes over its iterations).
package analysis
