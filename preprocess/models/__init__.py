"""What the schemes' subword segmentation stands on: SentencePiece models (:mod:`.spm`, :mod:`.spm_model`), fairseq
dictionaries (:mod:`.fairseq_dict`) and the vocabularies read as token lists (:mod:`.vocabularies`)."""
