/**
 * An HNSW index whose removals are physical: {@link dev.nepenthe.hnsw.HnswIndex#remove} takes the
 * node out of every list on every layer and repairs its neighbourhood at once, instead of leaving a
 * tombstone that keeps routing searches (hnswlib's markDelete, Lucene until a merge).
 *
 * <h2>Roles</h2>
 *
 * <ul>
 *   <li>{@link dev.nepenthe.hnsw.HnswIndex}: the public index; its locks, slots and ordinal map.
 *       {@link dev.nepenthe.hnsw.HnswQuery} runs one lock-free query; {@link
 *       dev.nepenthe.hnsw.HnswFile} writes and reads the file format (described there).
 *   <li>{@link dev.nepenthe.hnsw.HnswGraph}: the layout (layer-0 lists in one int array, upper
 *       lists per node, slots and the entry point), named accessors only; {@link
 *       dev.nepenthe.hnsw.SlotVectors} holds the vectors and codes, {@link
 *       dev.nepenthe.hnsw.ReverseLinks} the reverse lists, {@link dev.nepenthe.hnsw.GraphLayout} is
 *       the view a search walks.
 *   <li>{@link dev.nepenthe.hnsw.HnswInserter}: concurrent insertion with the neighbour heuristic.
 *       A back-link into a full list drops the one worst neighbour that is closer to a better one
 *       than to the list's owner (Lucene's rule), so lists stay full; re-running the heuristic over
 *       the whole list (hnswlib's rule) can halve a list, and on real embeddings it reached less
 *       recall for the vectors scored (docs/BENCHMARKS.md, "Every peer as its users run it").
 *   <li>{@link dev.nepenthe.hnsw.HnswSearcher}: the descent through the upper layers (greedy for
 *       inserts and repairs, a beam of four for searches, which keeps clustered data's queries out
 *       of the wrong cluster) and the layer beam search, with an accept filter that keeps expanding
 *       until k accepted nodes are found. Each expanded node's unvisited neighbours are scored in
 *       one bulk call; the visited set is one bit per slot (it stays in cache) and is cleared by
 *       the words the search touched.
 *   <li>{@link dev.nepenthe.hnsw.HnswRepairer}: removal and repair; {@link
 *       dev.nepenthe.hnsw.ReachabilityCertifier} proves every node is still reachable and links
 *       back any that is not.
 *   <li>{@link dev.nepenthe.hnsw.HnswIntegrityChecker}: the proof, as counts; {@link
 *       dev.nepenthe.hnsw.ScopedRemovalCheck} proves a removal where it touched the graph, from the
 *       {@link dev.nepenthe.hnsw.RemovalTraces} the index keeps.
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
 *       finds every free slot's code zero. Files store the codes (encoding them again slowed a
 *       large load); the checker still recomputes them on demand.
 *   <li>Speed: more queries per second than the float walk at the same efSearch and recall, the
 *       more so once the floats fall out of cache, and more with {@code rerank} = 2k than with the
 *       whole beam (each re-ranked vector is a cold read of its floats). {@code rerank} = k loses
 *       recall; 2k (the default) keeps the whole beam's. The walk's own work (lists, visited set,
 *       heaps) is the same in both modes and is what keeps the gain below what a quarter of the
 *       bytes would suggest. Figures: docs/BENCHMARKS.md, "Quantized: int8 codes against Lucene's
 *       int7 and BBQ and jvector's PQ".
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
 * in-link is re-linked from its closest node with room, and the reachability certificate ({@link
 * dev.nepenthe.hnsw.ReachabilityCertifier}) proves every node still reachable, checking only the
 * nodes that lost an in-link and falling back to a layer-0 walk that links back anything stranded
 * when it cannot. Re-selecting the whole list from scratch was tried first: it drops live edges
 * that other nodes depend on and stranded whole clusters after many removals.
 *
 * <h2>Concurrency</h2>
 *
 * Searches never block on a repair: they read lists without locks (release/acquire on the list
 * count) and skip nodes marked for removal. Inserts run in parallel with each other; a removal
 * excludes inserts, then frees its slots under a short exclusive lock that waits for running
 * searches, so no search can return an ordinal after its {@code remove} returned.
 *
 * <h2>What it may use</h2>
 *
 * store-core's public API and its {@code internal} index, io, memory and vector helpers; never
 * another index module (ArchitectureTest checks both).
 */
package dev.nepenthe.hnsw;
