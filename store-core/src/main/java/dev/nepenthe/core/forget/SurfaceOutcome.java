package dev.nepenthe.core.forget;

import java.util.List;

/**
 * What one surface did and proved for one operation. Problems name ordinals, counts and file names,
 * never content.
 *
 * @param surface the surface's name
 * @param erasureClass how completely the surface can erase
 * @param purged items the surface removed (records, codes, cache entries; its own unit)
 * @param checked items its verification examined
 * @param problems why verification failed; empty when it passed
 * @param residual what remains by design after a clean purge (for example second-order influence on
 *     an HNSW graph), or null
 */
public record SurfaceOutcome(
        String surface,
        ErasureClass erasureClass,
        long purged,
        long checked,
        List<String> problems,
        String residual) {

    /**
     * Copies the problems.
     *
     * @throws NullPointerException if the list of problems is null or holds a null
     */
    public SurfaceOutcome {
        problems = List.copyOf(problems);
    }

    /**
     * Whether this surface lets the operation seal.
     *
     * @return true when verification found no problem and the surface is not logical-only
     */
    public boolean clean() {
        return problems.isEmpty() && erasureClass != ErasureClass.LOGICAL_ONLY;
    }
}
