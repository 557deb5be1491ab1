/**
 * What the store facade ({@code dev.nepenthe.core.Nepenthe}) stands on: the folder lock, the
 * services one store shares (keys, journal, the forget protocol, the signing key) and how
 * collections are found, opened, created and dropped in the data folder. It may use every other
 * internal package and the API types, but never the facade or {@code VectorCollection} (the facade
 * wraps what this package returns).
 */
package dev.nepenthe.core.internal.store;
