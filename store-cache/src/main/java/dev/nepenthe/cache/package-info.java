/**
 * A cache of search results in front of {@code VectorCollection.search} that takes part in every
 * forget as an {@code ErasureSurface}: it stops serving a scope when the forget is marked, purges
 * it and proves the purge. May use store-core's API packages only, nothing internal.
 */
package dev.nepenthe.cache;
