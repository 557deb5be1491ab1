/**
 * The replica's internals; not API. Among them the payload journal, where the bodies of the
 * commands that Ratis replicates live, encrypted per segment, so that a forget can destroy them on
 * every replica. May change at any commit.
 */
package dev.nepenthe.cluster.internal;
