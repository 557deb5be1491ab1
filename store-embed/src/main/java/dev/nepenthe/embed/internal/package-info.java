/**
 * What Nepenthe's own shipped examples share (the folder an example owns). Uses the JDK only.
 * Internal: it may change at any commit, and is not for users.
 */
package dev.nepenthe.embed.internal;
