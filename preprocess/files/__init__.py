"""The input and output policy every command shares: reading text (:mod:`.inputs`), writing outputs atomically and
never over an input (:mod:`.outputs`), checking that a model or vocabulary file is whole (:mod:`.integrity`)."""
