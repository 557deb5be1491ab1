/**
 * An HNSW index whose removals are physical: {@link dev.nepenthe.hnsw.HnswIndex#remove} takes the
 * node out of every list on every layer and repairs its neighbourhood at once, instead of leaving a
 * tombstone that keeps routing searches (hnswlib's markDelete, Lucene until a merge).
 *
 * <h2>Roles</h2>
 *
 * <ul>
 *   <li>{@link dev.nepenthe.hnsw.HnswGraph}: the layout (vectors back to back, layer-0 lists in one
 *       int array, upper lists per node, reverse lists), named accessors only.
 *   <li>{@link dev.nepenthe.hnsw.HnswInserter}: concurrent insertion with the neighbour heuristic.
 *       A back-link into a full list drops the one worst neighbour that is closer to a better one
 *       than to the list's owner (Lucene's rule), so lists stay full; re-running the heuristic over
 *       the whole list (hnswlib's rule) can halve a list, and measured on MiniLM embeddings it
 *       reached less recall for the vectors scored.
 *   <li>{@link dev.nepenthe.hnsw.HnswSearcher}: the descent through the upper layers (greedy for
 *       inserts and repairs, a beam of four for searches, which keeps clustered data's queries out
 *       of the wrong cluster) and the layer beam search, with an accept filter that keeps expanding
 *       until k accepted nodes are found. Each expanded node's unvisited neighbours are scored in
 *       one bulk call; the visited set is one bit per slot (it stays in cache) and is cleared by
 *       the words the search touched.
 *   <li>{@link dev.nepenthe.hnsw.HnswRepairer}: removal and repair.
 *   <li>{@link dev.nepenthe.hnsw.HnswIntegrityChecker}: the proof, as counts.
 *   <li>{@link dev.nepenthe.hnsw.ScorerSupplier} and {@link dev.nepenthe.hnsw.NodeScorer}: the
 *       scorer seam. Searches, inserts, repairs and the neighbour heuristic score only through it,
 *       never on vectors: a query scorer for a search, a scorer aimed at a stored node for an
 *       insert or a repair, and {@code isExact()} for whether a score may be returned as is. {@link
 *       dev.nepenthe.hnsw.FloatVectorScorers} is the exact float implementation over the graph's
 *       vectors; {@link dev.nepenthe.hnsw.Int8VectorScorers} scores int8 codes and is not exact.
 * </ul>
 *
 * <h2>Quantized search: {@code quantization=int8}</h2>
 *
 * With {@code quantization=int8} ({@link dev.nepenthe.hnsw.HnswParams}) every slot keeps, beside
 * its float vector, an {@link dev.nepenthe.hnsw.Int8Codes int8 code}: one signed byte per dimension
 * on the vector's own scale (its centre and step) plus four floats of corrections. A search walks
 * the graph scoring codes with integer kernels, then re-scores its best {@code rerank} candidates
 * (default: twice k; the whole beam with {@code rerank >= efSearch}) from the floats and returns
 * those exact scores only; filtered searches that fall back to an exact scan score floats. Building
 * and repairing always score floats, so the graph is the one a float index builds.
 *
 * <ul>
 *   <li>Memory per vector: {@code 4 * dim} bytes of floats, kept for the re-rank, plus {@code 16 +
 *       ceil(dim / 4) * 4} bytes of code (1536 + 400 at d = 384): a quarter more than a float
 *       graph, not less. What it buys is that a walk reads a quarter of the bytes.
 *   <li>No trained state: a code is a function of its own vector alone (no codebook, no shared
 *       centre or range), so no code can hold anything of another vector, and a removal leaves
 *       nothing to retrain. A freed slot's code is zeroed where its vector is; {@link
 *       dev.nepenthe.hnsw.HnswIntegrityChecker} recomputes every live code from its vector and
 *       finds every free slot's code zero. Files store the codes (a load that encoded them again
 *       paid 1.8 s at 1M nodes); the checker still recomputes them on demand.
 *   <li>Speed, measured single-threaded on a shared 2-core AVX-512 machine (clustered 384-d data,
 *       HnswQuantizedMeasurement, figures that moved by 20% from run to run): about 1.3 to 1.9
 *       times the float QPS at the same efSearch and recall, more at 100k vectors than at 20k (the
 *       floats fall out of cache), more with {@code rerank} = 2k than with the whole beam (each
 *       re-ranked vector is a cold read of its floats). Recall with the whole beam re-ranked equals
 *       float recall within 0.01; {@code rerank} = k loses several points, 2k (the default) about
 *       nothing: on 117,000 MiniLM sentence embeddings it gave the whole beam's recall at every
 *       efSearch from 16 to 256. The walk's own work (lists, visited set, heaps) is the same in
 *       both modes and is what keeps the ratio below the 4x the bytes would suggest.
 * </ul>
 *
 * <h2>Finding who links to a removed node: reverse links, not a search</h2>
 *
 * Every list change also updates the reverse list of each neighbour gained or lost, so the
 * in-neighbours of x on each layer are a lookup. IP-DiskANN instead searches toward x and treats
 * the nodes it meets as in-neighbours; that is cheaper in memory but finds most of them, not all,
 * and every one it misses keeps an edge to a removed slot, which is exactly the residue a physical
 * delete has to rule out (and which the checker would then report). The price is one int per edge
 * and a little work on each list change.
 *
 * <h2>How a list is repaired</h2>
 *
 * For each node a that linked to a removed x, on each layer: (1) its surviving neighbours stay; (2)
 * the heuristic picks replacements from x's surviving neighbours plus the pool of one short beam
 * search toward x (ef = repairEf, seeded with x's survivors, run once per removed node and shared
 * by all its in-neighbours, which lie near x by construction), each kept only if it is closer to a
 * than to everything already in the list; (3) the closest remaining candidates fill the list back
 * to its old length. Then every surviving out-neighbour b of x is checked to still have an in-link
 * from some surviving in-neighbour of x (a path a -> x -> b becomes a -> b), a node left with no
 * in-link is re-linked from its closest node with room, and a layer-0 reachability walk links back
 * anything stranded: after every batch and every entry-point move, and after every ceil(slots /
 * 1024) single removals (so a large graph does not pay a full walk per removal; measured: 4 of
 * 90,000 nodes stranded by 10,000 single removals without the walk). Re-selecting the whole list
 * from scratch was tried first: it drops live edges that other nodes depend on and stranded whole
 * clusters after 60% removals.
 *
 * <h2>Concurrency</h2>
 *
 * Searches never block on a repair: they read lists without locks (release/acquire on the list
 * count) and skip nodes marked for removal. Inserts run in parallel with each other; a removal
 * excludes inserts, then frees its slots under a short exclusive lock that waits for running
 * searches, so no search can return an ordinal after its {@code remove} returned.
 */
package dev.nepenthe.hnsw;
