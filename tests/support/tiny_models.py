"""Tiny sentence-transformers models made here, with random weights and a tokenizer
trained on a few sentences (no download): one per family people pick, BERT (WordPiece,
token types) and XLM-RoBERTa (a sentencepiece-style Unigram tokenizer, no token
types). They test the path a model takes (config set → prepare → index → ONNX
queries), not the quality of its vectors."""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "Run database migrations on staging first",
    "The billing database has 1.2 TB of data",
    "Prefers pytest over unittest for Python tests",
    "数据库迁移先在预发环境跑一遍",
    "喜欢先看结论，再看细节",
    "代码注释用英文，讨论用中文",
] * 10
FAMILIES = ("bert", "xlm-roberta")


def _bert():  # noqa: ANN202 - (model, tokenizer), imported lazily
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(
        CORPUS, trainers.WordPieceTrainer(vocab_size=200, special_tokens=specials)
    )
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )
    config = BertConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    torch.manual_seed(0)
    return BertModel(config), fast


def _xlm_roberta():  # noqa: ANN202 - (model, tokenizer), imported lazily
    import torch
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import PreTrainedTokenizerFast, XLMRobertaConfig, XLMRobertaModel

    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=200, special_tokens=specials, unk_token="<unk>")
    tok.train_from_iterator(CORPUS, trainer)
    bos, eos = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", bos), ("</s>", eos)],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="<s>",
        sep_token="</s>",
        mask_token="<mask>",
        model_input_names=["input_ids", "attention_mask"],
    )
    config = XLMRobertaConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=130,
        pad_token_id=tok.token_to_id("<pad>"),
        bos_token_id=bos,
        eos_token_id=eos,
        type_vocab_size=1,
    )
    torch.manual_seed(0)
    return XLMRobertaModel(config), fast


def tiny_model(family: str, where: Path) -> Path:
    """A sentence-transformers folder (transformer, mean pooling, normalization) of the
    given family under `where`; its path."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as st_models

    model, tokenizer = {"bert": _bert, "xlm-roberta": _xlm_roberta}[family]()
    hf = where / f"tiny-{family}-hf"
    model.save_pretrained(hf)
    tokenizer.save_pretrained(hf)
    transformer = st_models.Transformer(str(hf), max_seq_length=64)
    pooling = st_models.Pooling(transformer.get_embedding_dimension(), "mean")
    folder = where / f"tiny-{family}"
    SentenceTransformer(modules=[transformer, pooling, st_models.Normalize()], device="cpu").save(
        str(folder)
    )
    return folder
