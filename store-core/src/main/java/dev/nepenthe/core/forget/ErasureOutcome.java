package dev.nepenthe.core.forget;

/**
 * What a sealed forget found and did, as its receipt states it. A receipt never claims an erasure
 * that did not happen: a scope that matched nothing seals as {@link #NOTHING_FOUND}.
 */
public enum ErasureOutcome {
    /** Records, keys or derived items of the scope were found and erased. */
    ERASED,
    /** The tenant exists but nothing in it matched the scope; nothing was erased. */
    NOTHING_FOUND,
    /**
     * No collection held any record of the tenant when the forget was marked; nothing was erased.
     */
    UNKNOWN_TENANT
}
