/**
 * Replicas of one store on Apache Ratis: a group of members, each running today's engine as its
 * state machine, with writes ordered by the replicated log and forgets proven on every member
 * (docs/CLUSTER.md).
 */
package dev.nepenthe.cluster;
