package dev.nepenthe.core;

import java.util.Collection;
import java.util.NoSuchElementException;

/**
 * A collection name that the store does not hold. Unchecked, like the {@link
 * NoSuchElementException} it extends; the message lists the collections that exist.
 */
public final class UnknownCollectionException extends NoSuchElementException {
    /**
     * Builds the exception.
     *
     * @param name the name that was asked for
     * @param existing the names the store holds, listed in the message
     */
    public UnknownCollectionException(String name, Collection<String> existing) {
        super("collection '" + name + "' does not exist; existing collections: " + existing);
    }
}
