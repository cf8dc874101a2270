



func.func @tensor_bool_list() -> !torch.vtensor {
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %none = torch.constant.none
  %int11 = torch.constant.int 11
  %0 = torch.prim.ListConstruct %true : (!torch.bool) -> !torch.list<bool>
  %1 = torch.aten.tensor %0, %int11, %none, %false : !torch.list<bool>, !torch.int, !torch.none, !torch.bool -> !torch.vtensor
  return %1 : !torch.vtensor
}

